package policy

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/shellgate/shellgate/internal/analysis"
)

// pattern is a user rule: a command prefix matched token by token after
// unwrapping. A trailing "*" matches any number of arguments, even none;
// any other token is a glob for exactly one word. Tokens are split at white
// space as a shell splits words: quoted text ('a b', "a b") is literal, white
// space and glob characters included, so that any word can be said.
type pattern struct {
	src    string
	tokens []string
	rest   bool
}

func compile(kind string, ps []string) ([]pattern, error) {
	out := make([]pattern, 0, len(ps))
	for _, p := range ps {
		toks, rest, err := patternFields(p)
		if err != nil {
			return nil, fmt.Errorf("policy: malformed %s pattern %q: %v", kind, p, err)
		}
		if len(toks) == 0 {
			return nil, fmt.Errorf("policy: empty %s pattern", kind)
		}
		pt := pattern{src: p, rest: rest}
		for _, t := range toks {
			if _, err := path.Match(t, ""); err != nil {
				return nil, fmt.Errorf("policy: malformed %s pattern %q: token %q: %v", kind, p, t, err)
			}
		}
		pt.tokens = toks
		out = append(out, pt)
	}
	return out, nil
}

// patternFields splits p into its tokens, each a path.Match glob: at white
// space outside quotes; text in single quotes, or in double quotes (where \"
// and \\ are escapes), is literal, its glob characters escaped. rest: the
// last token was an unquoted "*" (and not the only one), taken off the list.
func patternFields(p string) (toks []string, rest bool, err error) {
	var b strings.Builder
	in, bare := false, true // in a token; the token is unquoted so far
	end := func() {
		if in {
			toks = append(toks, b.String())
			rest = bare && b.String() == "*"
		}
		b.Reset()
		in, bare = false, true
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case ' ', '\t', '\n', '\r', '\v', '\f':
			end()
		case '\'', '"':
			in, bare = true, false
			j := i + 1
			for ; j < len(p) && p[j] != c; j++ {
				r := p[j]
				if c == '"' && r == '\\' && j+1 < len(p) && (p[j+1] == '"' || p[j+1] == '\\') {
					j++
					r = p[j]
				}
				if strings.IndexByte("*?[\\", r) >= 0 {
					b.WriteByte('\\')
				}
				b.WriteByte(r)
			}
			if j == len(p) {
				return nil, false, fmt.Errorf("no closing %c", c)
			}
			i = j
		default:
			in = true
			b.WriteByte(c)
			if c == '\\' && i+1 < len(p) { // a glob escape: the next byte is literal
				i++
				b.WriteByte(p[i])
			}
		}
	}
	end()
	if rest && len(toks) > 1 {
		return toks[:len(toks)-1], true, nil
	}
	return toks, false, nil
}

// match reports whether c matches p, and whether the match depends on an
// argument only known at run time.
func (p pattern) match(c *analysis.Command) (matched, uncertain bool) {
	if c.Kind != analysis.Simple || c.Dynamic && p.tokens[0] != "*" {
		return false, false
	}
	name, first := c.Name, p.tokens[0]
	if strings.Contains(first, "/") {
		name = c.Path
	} else if analysis.FoldsNames {
		first = strings.ToLower(first)
	}
	if ok, _ := path.Match(first, name); !ok {
		return false, false
	}
	rest := p.tokens[1:]
	if len(c.Args) < len(rest) || !p.rest && len(c.Args) != len(rest) && !c.MoreArgs {
		return false, false
	}
	for i, t := range rest {
		if c.Flags[i]&analysis.ArgDynamic != 0 {
			uncertain = true
			continue
		}
		if ok, _ := path.Match(t, c.Args[i]); !ok {
			return false, false
		}
	}
	return true, uncertain
}

// userRules applies the user's deny and ask patterns to the command being
// judged and reports whether an allow pattern matches it.
func (x *check) userRules(c *analysis.Command) (allowed bool) {
	for _, p := range x.e.deny {
		if ok, unsure := p.match(c); ok {
			if unsure {
				x.ask(RuleUserDeny, "`%s` may match the deny rule %q once its variables are expanded (rule user.deny). Write the arguments out literally.", c.Source, p.src)
			} else {
				x.deny(RuleUserDeny, "`%s` matches the deny rule %q of the shellgate configuration (rule user.deny). Do it another way or ask the user.", c.Source, p.src)
			}
		}
	}
	for _, p := range x.e.ask {
		if ok, _ := p.match(c); ok {
			x.ask(RuleUserAsk, "`%s` matches the ask rule %q of the shellgate configuration (rule user.ask): the user must approve it.", c.Source, p.src)
			x.hits[len(x.hits)-1].key = p.src // the user's own pattern, shown with the question
		}
	}
	for _, p := range x.e.allow {
		if ok, unsure := p.match(c); ok && !unsure {
			return true
		}
	}
	return false
}

// multiCommand programs take a subcommand that belongs in a session key.
var multiCommand = map[string]bool{
	"git": true, "npm": true, "pnpm": true, "yarn": true, "go": true, "cargo": true, "docker": true,
	"podman": true, "kubectl": true, "pip": true, "pip3": true, "systemctl": true, "brew": true,
	"apt": true, "apt-get": true, "gh": true, "bun": true, "deno": true, "uv": true, "poetry": true,
}

// sessionKey is what a user approves "for this session" when rule asks about
// c. Asking about the program itself (a daemon, untrusted mode), it is a
// prefix shown with the question: "npm publish", "docker run"; a user ask
// rule's key is its pattern.
// Asking about what the command contains (code in an option, a protected
// file, a variable), or for a program without subcommands, it is the exact
// command: approving one `sed '1e date'` must not approve every later sed.
func sessionKey(rule string, c *analysis.Command) string {
	if c.Dynamic {
		return ""
	}
	if (rule == RuleEscape || rule == RuleUntrusted) && c.Kind == analysis.Simple && multiCommand[c.Name] {
		if c.Sub != "" && c.Flags[c.SubAt]&analysis.ArgDynamic == 0 {
			return withOptions(c, c.SubAt)
		}
		if len(c.Operands) > 0 { // the first operand
			i := c.Operands[0]
			if c.Flags[i]&analysis.ArgDynamic != 0 {
				return ""
			}
			return withOptions(c, i)
		}
	}
	return c.Source
}

// allowPattern is the user allow pattern that lets exactly c run without the
// question rule asks: c's words as they are, each a glob of itself (a
// prefix and "*" would let more through than the question was about:
// docker run --privileged where docker run alpine was asked). "" when a
// word is only known at run time, or is not UTF-8 (no configuration file
// can say it: TOML is UTF-8, and read "\xff" as ÿ), and for the user's own
// ask rules, which allow patterns do not lift (dropAsks).
func allowPattern(rule string, c *analysis.Command) string {
	if c.Dynamic || c.Kind != analysis.Simple || rule == RuleUserAsk || !utf8.ValidString(c.Name) {
		return ""
	}
	parts := []string{globQuote(c.Name)}
	for i, a := range c.Args {
		if c.Flags[i]&analysis.ArgDynamic != 0 || !utf8.ValidString(a) {
			return ""
		}
		parts = append(parts, globQuote(a))
	}
	if c.MoreArgs {
		parts = append(parts, "*")
	}
	return strings.Join(parts, " ")
}

// globQuote makes s a pattern token that matches s alone: as it is when it
// has nothing a pattern reads otherwise, else quoted as a shell quotes a word,
// in single quotes (python3 -c 'print(1 + 2)'), or in double quotes when it
// has a single quote (python3 -c "open('a.txt')").
func globQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, "*?[\\'\" \t\n\r\v\f") {
		return s
	}
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// withOptions is the prefix key of c: its name, the argument at sub (the
// subcommand, or the first operand), and every option given, with its value —
// options change what a daemon is asked to do (docker run --privileged -v
// /:/host), so a key approved without them must not cover them. Operands
// (the image, the command it runs) are left out. "" when an option is only
// known at run time. For a program whose grammar shellgate does not know
// (docker), an option's value cannot be told from an operand: everything
// before the subcommand is kept, and after it each option with the word that
// follows it, which may be its value (-v /:/host).
func withOptions(c *analysis.Command, sub int) string {
	keep := map[int]bool{sub: true}
	if c.Parsed {
		operand := map[int]bool{}
		for _, i := range c.Operands {
			operand[i] = true
		}
		for i := range c.Args {
			if !operand[i] && !(i > sub && c.OptsEnd > 0 && i >= c.OptsEnd) {
				keep[i] = true
			}
		}
	} else {
		for i := range sub {
			keep[i] = true
		}
		for i := sub + 1; i < len(c.Args); i++ {
			if a := c.Args[i]; strings.HasPrefix(a, "-") && a != "-" {
				keep[i] = true
				if a == "--" {
					break
				}
				if !strings.Contains(a, "=") && i+1 < len(c.Args) {
					keep[i+1] = true
				}
			}
		}
	}
	parts := []string{c.Name}
	for i, a := range c.Args {
		if !keep[i] {
			continue
		}
		if c.Flags[i]&analysis.ArgDynamic != 0 {
			return ""
		}
		if q, err := syntax.Quote(a, syntax.LangBash); err == nil {
			a = q
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
