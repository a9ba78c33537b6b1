package audit

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/shellgate/shellgate/internal/shell"
)

// Redacted replaces a secret in the log.
const Redacted = "[REDACTED]"

// Redact returns command with what looks like a credential replaced by Redacted.
// It reads the text, not the shell syntax, so it works on any command, even one
// that does not parse, and errs towards redacting too much:
//
//   - the value of a secret-named assignment, option, JSON key or header, the names
//     being those shell.IsSecret strips from commands' environments:
//     GITHUB_TOKEN=…, --password=…, --api-key …, "client_secret": "…",
//     Authorization: Bearer …, X-Api-Key: …, Cookie: …;
//   - values shaped like keys whatever they are called (shell.LooksLikeKey: sk-…,
//     ghp_…, xoxb-…, AKIA…, glpat-…), and JSON web tokens;
//   - the password of a URL (scheme://user:password@host) and of curl -u user:password;
//   - PEM private key blocks.
//
// A secret in a form none of these match (a password as a bare argument, say)
// is not found: the log is private to the user (0600) for that reason too.
func Redact(command string) string {
	if !maySecret(command) {
		return command
	}
	return redact(command)
}

// maySecret reports whether command has what at least one pattern of
// redactPatterns needs: '=' or ':' (assignments, JSON keys, headers, URLs),
// "--" (options, PEM blocks), "-u" or "-U" (curl -u, --user), or a run of 11
// key characters (keys, JSON web tokens). Most commands have none (echo hi,
// git status, ls -la, go test ./...), and then no pattern is compiled: that
// was ~0.5 ms of every one-shot run.
func maySecret(command string) bool {
	if strings.ContainsAny(command, "=:") || strings.Contains(command, "--") ||
		strings.Contains(command, "-u") || strings.Contains(command, "-U") {
		return true
	}
	run := 0
	for i := 0; i < len(command); i++ {
		if c := command[i]; c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
			if run++; run >= 11 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

func redact(command string) string {
	r := redactor{s: command, quote: quoteContext(command)}
	r.assignments()
	r.jsonKeys()
	r.headers()
	r.options()
	r.userOptions()
	r.urls()
	r.keys()
	r.pem()
	return r.apply()
}

type span struct{ start, end int }

type redactor struct {
	s     string
	quote []byte // for each byte: the quote it is inside ('\'', '"') or 0
	spans []span
}

func (r *redactor) add(start, end int) {
	if strings.HasPrefix(r.s[start:], Redacted) {
		end = max(end, start+len(Redacted)) // already redacted: keep the marker whole
	}
	if start < end {
		r.spans = append(r.spans, span{start, end})
	}
}

// secretName reports a name (variable, option, key, header) whose value is a
// secret: shell.IsSecret's names, except those naming where a secret is kept
// (--key-file, SSH_KEY_PATH), which are worth keeping in the log.
func secretName(name string) bool {
	name = strings.TrimLeft(name, "-")
	if !shell.IsSecret(name) {
		return false
	}
	words := strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	last := words[len(words)-1]
	return last != "FILE" && last != "PATH" && last != "DIR" && last != "FILES"
}

// redactPatterns are compiled on first use, not when the program starts: most
// runs of shellgate write no audit line, and most commands need none of them
// (maySecret). Each needs what maySecret looks for.
type redactPatterns struct {
	assignment, jsonKey, header, option, userOption, url, keyRun, jwt, pem, scheme *regexp.Regexp
}

var patterns = sync.OnceValue(func() *redactPatterns {
	return &redactPatterns{
		// NAME=value, --name=value, name=value in a query string or form.
		assignment: regexp.MustCompile(`(?:^|[^A-Za-z0-9_.-])(-{0,2}[A-Za-z_][A-Za-z0-9_.-]*)=`),
		// "name": value, also with the quotes escaped inside a double-quoted word.
		jsonKey: regexp.MustCompile(`\\?"([A-Za-z_][A-Za-z0-9_.-]*)\\?"[ \t]*:[ \t]*`),
		// Name: value, as an HTTP header or a YAML line.
		header: regexp.MustCompile(`(?:^|[\s"'])([A-Za-z][A-Za-z0-9_-]*):[ \t]*`),
		// --name value (a separate word).
		option: regexp.MustCompile(`(?:^|\s)(--[A-Za-z][A-Za-z0-9_-]*)[ \t]+`),
		// curl -u user:password, --user, --proxy-user.
		userOption: regexp.MustCompile(`(?:^|\s)(?:-u|--user|--proxy-user|-U)(?:[ \t]+|=)`),
		// scheme://user:password@
		url: regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@'"]*:([^\s/?#@'"]*)@`),
		// Runs of key characters, for LooksLikeKey.
		keyRun: regexp.MustCompile(`[A-Za-z0-9_-]{16,}`),
		jwt:    regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`),
		pem:    regexp.MustCompile(`(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(.*?)(-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|$)`),
		// Authorization schemes kept in front of the redacted credential.
		scheme: regexp.MustCompile(`(?i)^(bearer|basic|token|digest|bot|negotiate)[ \t]+`),
	}
})

func (r *redactor) assignments() {
	for _, m := range patterns().assignment.FindAllStringSubmatchIndex(r.s, -1) {
		if end := r.valueEnd(m[1]); secretName(r.s[m[2]:m[3]]) && !reference(r.s[m[1]:end]) {
			r.add(m[1], end)
		}
	}
}

func (r *redactor) jsonKeys() {
	for _, m := range patterns().jsonKey.FindAllStringSubmatchIndex(r.s, -1) {
		if !secretName(r.s[m[2]:m[3]]) {
			continue
		}
		start := m[1]
		switch {
		case strings.HasPrefix(r.s[start:], `\"`):
			start += 2
			end := strings.Index(r.s[start:], `\"`)
			if end < 0 {
				end = len(r.s) - start
			}
			r.add(start, start+end)
		case strings.HasPrefix(r.s[start:], `"`):
			start++
			end := start
			for end < len(r.s) && r.s[end] != '"' {
				if r.s[end] == '\\' {
					end++
				}
				end++
			}
			r.add(start, min(end, len(r.s)))
		default: // a number, or a bare YAML-ish word
			end := start
			for end < len(r.s) && !strings.ContainsRune(",}] \t\r\n\"'", rune(r.s[end])) {
				end++
			}
			r.add(start, end)
		}
	}
}

func (r *redactor) headers() {
	for _, m := range patterns().header.FindAllStringSubmatchIndex(r.s, -1) {
		if !secretName(r.s[m[2]:m[3]]) {
			continue
		}
		start := m[1]
		if s := patterns().scheme.FindStringIndex(r.s[start:]); s != nil {
			start += s[1]
		}
		if start >= len(r.s) {
			continue
		}
		// To the end of the quoted word it is in, else of the line.
		end := start
		q := r.quote[start]
		if q == '\\' {
			q = 0
		}
		for end < len(r.s) && r.s[end] != '\n' && r.s[end] != '\r' {
			if q != 0 && r.quote[end] != q {
				break
			}
			end++
		}
		r.add(start, end)
	}
}

func (r *redactor) options() {
	for _, m := range patterns().option.FindAllStringSubmatchIndex(r.s, -1) {
		if !secretName(r.s[m[2]:m[3]]) || m[1] >= len(r.s) || r.s[m[1]] == '-' {
			continue // --private --flag: a switch, not a value
		}
		if end := r.valueEnd(m[1]); !reference(r.s[m[1]:end]) {
			r.add(m[1], end)
		}
	}
}

func (r *redactor) userOptions() {
	for _, m := range patterns().userOption.FindAllStringIndex(r.s, -1) {
		end := r.valueEnd(m[1])
		if i := strings.IndexByte(r.s[m[1]:end], ':'); i >= 0 {
			r.add(m[1]+i+1, end)
		}
	}
}

func (r *redactor) urls() {
	for _, m := range patterns().url.FindAllStringSubmatchIndex(r.s, -1) {
		r.add(m[2], m[3])
	}
}

func (r *redactor) keys() {
	for _, m := range patterns().keyRun.FindAllStringIndex(r.s, -1) {
		if shell.LooksLikeKey(r.s[m[0]:m[1]]) {
			r.add(m[0], m[1])
		}
	}
	for _, m := range patterns().jwt.FindAllStringIndex(r.s, -1) {
		r.add(m[0], m[1])
	}
}

func (r *redactor) pem() {
	for _, m := range patterns().pem.FindAllStringSubmatchIndex(r.s, -1) {
		r.add(m[4], m[5])
	}
}

// valueEnd returns the end of the value that starts at i: the rest of the shell
// word, quoted parts included, or of the quoted string i is inside; '&' ends it
// too (a query string or form).
func (r *redactor) valueEnd(i int) int {
	if i >= len(r.s) {
		return i
	}
	inside := r.quote[i]
	if inside == '\\' || i > 0 && r.quote[i-1] == 0 {
		inside = 0 // the value starts the word or a quote: the whole word is the value
	}
	for j := i; j < len(r.s); j++ {
		c, q := r.s[j], r.quote[j]
		switch {
		case inside != 0 && q != inside:
			return j // the enclosing quote closed
		case q != 0 && inside == 0:
			continue // a quoted or escaped part of the word
		case c == '&' || c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return j
		case inside == 0 && strings.IndexByte(";|<>()`", c) >= 0:
			return j
		}
	}
	return len(r.s)
}

// reference reports a value that names a secret instead of holding it: a
// variable or a command substitution ($TOKEN, "$(cat key)").
func reference(v string) bool {
	return strings.HasPrefix(strings.TrimLeft(v, `"`), "$")
}

// quoteContext marks each byte of s with the shell quote it is inside (a single
// or a double quote), a backslash for a character escaped outside quotes (and
// for its backslash), or 0.
// The quote characters themselves are 0: they open and close.
func quoteContext(s string) []byte {
	ctx := make([]byte, len(s))
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q == 0 && (c == '\'' || c == '"'):
			q = c
		case q != 0 && c == q:
			q = 0
		case c == '\\' && q != '\'' && i+1 < len(s):
			mark := q
			if q == 0 {
				mark = '\\'
			}
			ctx[i], ctx[i+1] = mark, mark
			i++
		default:
			ctx[i] = q
		}
	}
	return ctx
}

// apply replaces the spans, merged where they overlap.
func (r *redactor) apply() string {
	if len(r.spans) == 0 {
		return r.s
	}
	slices.SortFunc(r.spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	at := 0
	for _, sp := range r.spans {
		if sp.end <= at {
			continue
		}
		if sp.start < at {
			sp.start = at
		} else {
			b.WriteString(r.s[at:sp.start])
			b.WriteString(Redacted)
		}
		at = sp.end
	}
	b.WriteString(r.s[at:])
	return b.String()
}
