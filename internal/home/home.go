// Package home says what of the user's home directory a sandbox session
// shows: toolchains and plain settings read-only, and settings files that
// mix in credentials with the credentials taken out. The rest is absent.
package home

import (
	"bytes"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// An Entry is a path in the user's home that the session's view shows:
// a toolchain's install or bin dir read-only, or (scrub) a settings file with
// its credentials taken out. Caches are not here: the Gate names them
// (Spec.Caches) and the view gives them copy-on-write. What is not here is not
// in the view — credentials of every kind, the agents' own state, shell
// history, shellgate's own state and settings — so no list of secrets has to be
// kept up: a toolchain missing from here fails visibly (not found), and the
// user adds it with [sandbox] visible.
type Entry struct {
	Rel   string // relative to the home directory
	Scrub bool   // a settings file shown by Scrub
	Why   string
}

// Entries is every path of the home a session shows. It and the tables below
// are built on first use: a process that starts no session (a hook's `check`)
// does not build them as it starts.
var Entries = sync.OnceValue(func() []Entry {
	var es []Entry
	for _, rel := range []string{
		".local/bin", ".local/lib", ".local/pipx", ".local/share/uv", ".local/share/mise", ".local/share/fnm",
		".local/share/virtualenvs", ".local/share/coursier",
		".cargo/bin", ".cargo/env", ".rustup", "go/bin", ".nvm", ".volta", ".fnm", ".pyenv", ".rbenv", ".rvm",
		".asdf", ".sdkman", ".bun/bin", ".deno/bin", ".npm-global", ".yarn/bin", ".config/yarn/global",
		".gradle/wrapper", ".dotnet", ".ghcup", ".cabal/bin", ".opam", ".juliaup", ".elan", ".nimble",
		"miniconda3", "anaconda3", "miniforge3", ".cache/ms-playwright",
	} {
		es = append(es, Entry{Rel: rel, Why: "toolchain, read-only"})
	}
	for _, rel := range []string{
		".tool-versions", ".config/git/ignore", ".config/git/attributes", ".gitignore_global",
		".editorconfig", ".inputrc",
	} {
		es = append(es, Entry{Rel: rel, Why: "settings, read-only"})
	}
	for _, rel := range []string{
		".gitconfig", ".config/git/config", ".npmrc", ".yarnrc", ".yarnrc.yml", ".bunfig.toml",
		".config/pip/pip.conf", ".pip/pip.conf", ".config/uv/uv.toml", ".condarc", ".gemrc",
		".cargo/config.toml", ".cargo/config", ".config/go/env",
		// mise's global config, whose [env] may set a token for every project.
		".config/mise/config.toml", ".config/mise/config.local.toml", ".config/mise/settings.toml",
	} {
		es = append(es, Entry{Rel: rel, Scrub: true, Why: "settings, credentials taken out"})
	}
	return es
})

// Shapes of credentials in settings files. A setting whose name says it holds
// one (npm's _auth, _authToken and //host/:_password, git's http.extraHeader
// and credential sections, cargo's token, yarn's npmAuthToken, pip's and
// conda's passwords), a value shaped like a known token, or the user:password
// of a URL.
var (
	scrubOnce   sync.Once
	secretName  *regexp.Regexp
	tokenShape  *regexp.Regexp
	urlUserinfo *regexp.Regexp
)

func scrubPatterns() {
	scrubOnce.Do(func() {
		secretName = regexp.MustCompile(`(?i)auth|token|pass(w|phrase|\b|$)|pwd|secret|credential|extraheader|cookie|private[-_]?key|api[-_]?key`)
		tokenShape = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY|\b(?:gh[pousr]_|github_pat_|glpat-|npm_|xox[abprs]-|hf_|sk-|AKIA)[A-Za-z0-9_\-]{12,}|://\S*/t/[^/\s"']{8,}`)
		urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)[^/@\s"']+@`)
	})
}

// Show returns the settings file rel (relative to the home) as a session
// sees it. git's, npm's and pip's are shown by an allow-list: the sections and
// keys builds need (identity, registries, mirrors, proxies, certificates'
// paths, filters, hooks' paths), nothing else, so a credential under a name
// no list foresaw (sendemail.smtpPass, npm's key=, a token in an alias)
// stays out. The other formats go through Scrub.
func Show(rel string, data []byte) []byte {
	switch path.Base(rel) {
	case ".gitconfig", "config":
		if strings.Contains(rel, "git") {
			return allowINI(data, gitKeep())
		}
	case ".npmrc":
		return allowKeys(data, npmKeep())
	case "pip.conf":
		return allowINI(data, pipKeep())
	}
	return Scrub(data)
}

// gitKeep: section (lowercase, without its subsection) → the keys shown ("*":
// all of them, "-key": but that one). Left out: credential, sendemail, alias
// (an alias may carry a token), http's headers and cookies, core.sshCommand
// and core.askPass (command lines that may carry a key's passphrase, a
// proxy's password or a token, and are of no use where the credentials they
// unlock are absent), and every section not named.
var gitKeep = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"user": {"name", "email", "signingkey", "useconfigonly"}, "author": {"*"}, "committer": {"*"},
		"core": {"*", "-sshcommand", "-askpass"}, "init": {"*"}, "color": {"*"}, "pull": {"*"}, "push": {"*"}, "fetch": {"*"},
		"merge": {"*"}, "rebase": {"*"}, "diff": {"*"}, "branch": {"*"}, "status": {"*"}, "log": {"*"},
		"advice": {"*"}, "safe": {"*"}, "help": {"*"}, "column": {"*"}, "commit": {"*"}, "tag": {"*"},
		"gpg": {"*"}, "interactive": {"*"}, "pager": {"*"}, "format": {"*"}, "filter": {"*"}, "lfs": {"*"},
		"url": {"insteadof", "pushinsteadof"}, "include": {"path"}, "includeif": {"path"}, "submodule": {"*"},
		"protocol": {"allow"}, "transfer": {"*"}, "receive": {"*"}, "feature": {"*"}, "maintenance": {"*"},
		"http": {"proxy", "sslcainfo", "sslcapath", "sslverify", "sslbackend", "postbuffer", "version", "lowspeedlimit", "lowspeedtime", "followredirects"},
	}
})

// npmKeep are the .npmrc keys shown; a scope's registry (@scope:registry) too.
// Left out: _auth, _authToken, _password, username, email, key, cert, otp and
// every //host/:… setting, which are per-registry credentials.
var npmKeep = sync.OnceValue(func() map[string][]string {
	return map[string][]string{"": {
		"registry", "strict-ssl", "cafile", "ca", "proxy", "https-proxy", "noproxy", "no-proxy", "save-exact",
		"save-prefix", "engine-strict", "legacy-peer-deps", "fund", "audit", "update-notifier", "loglevel",
		"progress", "prefer-offline", "prefer-online", "package-lock", "lockfile-version", "init-author-name",
		"init-author-url", "init-license", "init-version", "git", "script-shell", "node-linker",
		"auto-install-peers", "strict-peer-dependencies", "shamefully-hoist", "public-hoist-pattern",
		"store-dir", "virtual-store-dir", "cache", "prefix", "ignore-scripts", "omit", "include", "fetch-retries",
		"fetch-timeout", "maxsockets", "color", "unicode", "sign-git-tag", "tag-version-prefix",
	}}
})

// pipKeep: pip.conf's sections and the keys shown.
var pipKeep = sync.OnceValue(func() map[string][]string {
	keys := []string{"index-url", "extra-index-url", "trusted-host", "find-links", "timeout", "retries",
		"no-cache-dir", "cache-dir", "disable-pip-version-check", "require-virtualenv",
		"break-system-packages", "proxy", "cert", "no-binary", "only-binary", "prefer-binary", "pre",
		"upgrade-strategy", "user", "no-index", "progress-bar"}
	m := map[string][]string{}
	for _, sec := range []string{"global", "install", "download", "wheel", "list", "freeze", "index", "search"} {
		m[sec] = keys
	}
	return m
})

// allowINI keeps an INI file's comments, blank lines, the headers of the
// sections in keep and their keys it names, each value with any URL's
// user:password taken out; a continued line goes with its key.
func allowINI(data []byte, keep map[string][]string) []byte {
	scrubPatterns()
	var out bytes.Buffer
	var section []string // nil: a section not shown
	shown := false       // the last key line was shown (for its continuations)
	cont := false        // the last line ended in a backslash: this one goes on its value
	for _, line := range strings.SplitAfter(string(data), "\n") {
		t := strings.TrimSpace(line)
		key, _, _ := strings.Cut(t, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		if cont {
			// A value's next line goes only where its key went, and only
			// if it would go read as a line of its own (a backslash in a
			// comment continues nothing).
			cont = continues(line)
			line = urlUserinfo.ReplaceAllString(line, "$1")
			if shown = shown && showKey(section, key, line); shown {
				out.WriteString(line)
			}
			continue
		}
		switch {
		case t == "" || t[0] == '#' || t[0] == ';':
			if !tokenShape.MatchString(line) {
				out.WriteString(line)
			}
			continue
		case t[0] == '[':
			name := strings.ToLower(strings.Trim(t, "[] \t"))
			name, _, _ = strings.Cut(name, " ")
			name, _, _ = strings.Cut(name, ".")
			section = keep[name]
			if line = urlUserinfo.ReplaceAllString(line, "$1"); section != nil && !tokenShape.MatchString(line) {
				out.WriteString(line)
			} else {
				section = nil
			}
			continue
		}
		cont = continues(line)
		line = urlUserinfo.ReplaceAllString(line, "$1")
		if shown = showKey(section, key, line); shown {
			out.WriteString(line)
		}
	}
	return out.Bytes()
}

// showKey says whether a key's line is shown in a section that keeps keys.
func showKey(section []string, key, line string) bool {
	return section != nil && (slices.Contains(section, "*") || slices.Contains(section, key)) &&
		!slices.Contains(section, "-"+key) && !tokenShape.MatchString(line)
}

// continues says whether an INI line's value goes on to the next line: it
// ends in an odd number of backslashes, as git reads a value.
func continues(line string) bool {
	t := strings.TrimRight(line, "\r\n")
	return (len(t)-len(strings.TrimRight(t, "\\")))%2 == 1
}

// allowKeys keeps a key=value file's comments, blank lines and the keys in
// keep[""] (and scoped registries), each value with any URL's user:password
// taken out.
func allowKeys(data []byte, keep map[string][]string) []byte {
	scrubPatterns()
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(string(data), "\n") {
		t := strings.TrimSpace(line)
		key, _, _ := strings.Cut(t, "=")
		key = strings.ToLower(strings.TrimSpace(key))
		scoped := strings.HasPrefix(key, "@") && strings.HasSuffix(key, ":registry")
		line = urlUserinfo.ReplaceAllString(line, "$1")
		if (t == "" || t[0] == '#' || t[0] == ';' || slices.Contains(keep[""], key) || scoped) &&
			!tokenShape.MatchString(line) {
			out.WriteString(line)
		}
	}
	return out.Bytes()
}

// Scrub returns an INI, TOML, YAML or npmrc settings file without its
// credentials: every line that names one anywhere (a setting's name, a key of
// an inline table or a flow mapping — bun's `registry = { url = …, token = … }`,
// a .yarnrc's quoted `"//host/:_authToken" "…"`), every line with a
// token-shaped value, what continues such a line (a YAML block or mapping
// indented beneath it, a TOML multi-line string), every section whose name
// names one (git's [credential]), and the user:password part of every URL.
// What is left — registries, mirrors, proxies, identities, aliases — is what
// builds need.
func Scrub(data []byte) []byte {
	scrubPatterns()
	var out bytes.Buffer
	skipSection := false
	under := -1       // ≥ 0: lines indented deeper than this continue a dropped line
	underKey := false // the dropped line is a key, whose list may be as deep
	closer := ""      // the end of a dropped line's TOML multi-line string
	for _, line := range strings.SplitAfter(string(data), "\n") {
		t := strings.TrimSpace(line)
		if closer != "" {
			if strings.Contains(line, closer) {
				closer = ""
			}
			continue
		}
		ind := len(line) - len(strings.TrimLeft(line, " \t"))
		if under >= 0 {
			if t == "" || ind > under || ind == under && underKey && (t == "-" || strings.HasPrefix(t, "- ")) {
				continue
			}
			under = -1
		}
		if strings.HasPrefix(t, "[") {
			skipSection = secretName.MatchString(t)
			if skipSection {
				continue
			}
		} else if skipSection && t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, ";") {
			continue
		}
		line = urlUserinfo.ReplaceAllString(line, "$1")
		if secretName.MatchString(line) || tokenShape.MatchString(line) {
			under, underKey = ind, t != "-" && !strings.HasPrefix(t, "- ")
			for _, q := range []string{`"""`, `'''`} {
				if strings.Count(line, q)%2 == 1 {
					closer = q
				}
			}
			continue
		}
		out.WriteString(line)
	}
	return out.Bytes()
}
