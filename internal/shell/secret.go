package shell

import "strings"

// secretWords mark a variable as secret when one of them appears inside any
// '_'-separated word of its upper-cased name: OPENAI_API_KEY, GITHUB_TOKEN,
// PGPASSWORD, AWS_SESSION_TOKEN, NPM_AUTHTOKEN, apiKey…
var secretWords = []string{
	"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE",
	"CREDENTIAL", "AUTH", "PRIVATE", "SESSION", "COOKIE",
}

// harmlessWords contain a secret word but name nothing secret.
var harmlessWords = map[string]bool{
	"AUTHOR": true, "AUTHORS": true, // GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL
	"XAUTHORITY": true, // a path to the X11 cookie file, needed by GUI test runners
	"KEYBOARD":   true,
	"KEYMAP":     true,
	"KEYTIMEOUT": true, // zsh
	"TOKENIZERS": true, // TOKENIZERS_PARALLELISM (Hugging Face)
}

// harmlessNames look secret by their words but are kept.
var harmlessNames = map[string]bool{
	// The ssh-agent socket lets git push and pull over ssh; the keys themselves
	// cannot be read through it.
	"SSH_AUTH_SOCK":   true,
	"DESKTOP_SESSION": true,
	"SESSION_MANAGER": true,
}

// secretNames are secret although no secret word appears in them.
var secretNames = map[string]bool{
	"DATABASE_URL": true, // almost always carries a password
	"MYSQL_PWD":    true,
	"PASS":         true,
}

// IsSecret reports whether an environment variable name looks like it holds a
// credential, so that Env strips it. The test is case-insensitive: a name is secret
// when a '_'-separated word of it contains KEY, TOKEN, SECRET, PASSWORD, PASSWD,
// PASSPHRASE, CREDENTIAL, AUTH, PRIVATE, SESSION or COOKIE, or is PASS or PWD after
// another word (DB_PASS, MYSQL_PWD), or the name is DATABASE_URL.
//
// Deliberately kept: words that merely contain a secret word (KEYBOARD, AUTHOR,
// XAUTHORITY, TOKENIZERS), SSH_AUTH_SOCK (git over ssh needs it and it does not reveal
// keys), and desktop session names (XDG_SESSION_*, DESKTOP_SESSION, SESSION_MANAGER).
// DBUS_SESSION_BUS_ADDRESS is stripped: the session bus reaches the desktop keyring.
func IsSecret(name string) bool {
	upper := strings.ToUpper(name)
	if harmlessNames[upper] || strings.HasPrefix(upper, "XDG_SESSION_") {
		return false
	}
	if secretNames[upper] {
		return true
	}
	words := strings.FieldsFunc(upper, func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	for i, word := range words {
		if harmlessWords[word] {
			continue
		}
		if i > 0 && (word == "PASS" || word == "PWD" || word == "PAT" || word == "DSN") {
			return true // DB_PASS, MYSQL_PWD, GH_PAT, SENTRY_DSN
		}
		if strings.Contains(word, "WEBHOOK") {
			return true // SLACK_WEBHOOK_URL: the URL is the credential
		}
		for _, secret := range secretWords {
			if strings.Contains(word, secret) {
				return true
			}
		}
	}
	return false
}

// IsHijack reports whether a variable makes a shell run code or change how it parses
// before the command runs: BASH_ENV and ENV (startup files), BASH_FUNC_* (exported
// functions), PROMPT_COMMAND, PS4 (expanded by set -x), SHELLOPTS and BASHOPTS
// (options), CDPATH and GLOBIGNORE (change what cd and globs do), IFS. Env always
// strips them from the inherited environment; only EnvOptions.Extra can set them.
func IsHijack(name string) bool {
	switch name {
	case "BASH_ENV", "ENV", "PROMPT_COMMAND", "PS4", "SHELLOPTS", "BASHOPTS",
		"CDPATH", "GLOBIGNORE", "IFS":
		return true
	}
	return strings.HasPrefix(name, "BASH_FUNC_")
}

// keyPrefixes start values that are credentials whatever their variable is
// called: OpenAI and Anthropic keys, GitHub tokens, Slack tokens (bot, user,
// refresh, app-level), AWS access key ids, GitLab and npm tokens.
var keyPrefixes = []string{
	"sk-", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xoxb-", "xoxp-", "xoxa-", "xoxr-", "xoxs-", "xoxe-", "xoxe.", "xapp-",
	"AKIA", "ASIA", "glpat-", "npm_",
}

// LooksLikeKey reports a value shaped like a credential: a known key prefix
// followed by a long run of key characters.
func LooksLikeKey(v string) bool {
	for _, p := range keyPrefixes {
		rest, ok := strings.CutPrefix(v, p)
		if !ok || len(rest) < 16 {
			continue
		}
		for _, r := range rest {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				return false
			}
		}
		return true
	}
	return false
}
