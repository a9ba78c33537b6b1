// Package home says what of the user's home directory a sandbox session
// shows: toolchains and plain settings read-only, and settings files that
// mix in credentials with the credentials taken out. The rest is absent.
package home

import (
	"bytes"
	"regexp"
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

// Entries is every path of the home a session shows.
var Entries = func() []Entry {
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
		".tool-versions", ".config/mise", ".config/git/ignore", ".config/git/attributes", ".gitignore_global",
		".editorconfig", ".inputrc",
	} {
		es = append(es, Entry{Rel: rel, Why: "settings, read-only"})
	}
	for _, rel := range []string{
		".gitconfig", ".config/git/config", ".npmrc", ".yarnrc", ".yarnrc.yml", ".bunfig.toml",
		".config/pip/pip.conf", ".pip/pip.conf", ".config/uv/uv.toml", ".condarc", ".gemrc",
		".cargo/config.toml", ".cargo/config", ".config/go/env",
	} {
		es = append(es, Entry{Rel: rel, Scrub: true, Why: "settings, credentials taken out"})
	}
	return es
}()

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
		secretName = regexp.MustCompile(`(?i)auth|token|passw|secret|credential|extraheader|cookie|private[-_]?key|api[-_]?key`)
		tokenShape = regexp.MustCompile(`\b(?:gh[pousr]_|github_pat_|glpat-|npm_|xox[abprs]-|hf_|sk-|AKIA)[A-Za-z0-9_\-]{12,}`)
		urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.\-]*://)[^/@\s"']+@`)
	})
}

// Scrub returns an INI, TOML, YAML or npmrc settings file without its
// credentials: every line whose setting name says it holds one, every section
// whose name does (git's [credential]), every line with a token-shaped value,
// and the user:password part of every URL. What is left — registries,
// mirrors, proxies, identities, aliases — is what builds need.
func Scrub(data []byte) []byte {
	scrubPatterns()
	var out bytes.Buffer
	skipSection := false
	for _, line := range strings.SplitAfter(string(data), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			skipSection = secretName.MatchString(t)
			if skipSection {
				continue
			}
		} else if skipSection && t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, ";") {
			continue
		}
		// The setting's name: before '=' (INI, TOML, npmrc, whose keys hold
		// ':' as in //host/:_authToken), else before ':' (YAML).
		key := t
		if i := strings.IndexByte(t, '='); i >= 0 {
			key = t[:i]
		} else if i := strings.IndexByte(t, ':'); i >= 0 {
			key = t[:i]
		}
		line = urlUserinfo.ReplaceAllString(line, "$1")
		if secretName.MatchString(key) || tokenShape.MatchString(line) {
			continue
		}
		out.WriteString(line)
	}
	return out.Bytes()
}
