package policy

import (
	"strings"

	"github.com/shellgate/shellgate/analysis"
)

// sedScriptTargets are the sed scripts given with -e/--expression, or the
// first operand when there is neither -e nor -f.
func sedScriptTargets(c *analysis.Command) []target {
	out := values(c, "e", "expression")
	if len(out) == 0 && len(c.Values("f", "file")) == 0 {
		out = nth(c, 0)
	}
	return out
}

// sedScripts is sedScriptTargets' text.
func sedScripts(c *analysis.Command) []string {
	var out []string
	for _, t := range sedScriptTargets(c) {
		out = append(out, t.path)
	}
	return out
}

// sedCommands splits a sed script into its commands, each with its address
// removed, and reports the command letter and what follows it.
func sedCommands(script string, f func(cmd byte, rest string) bool) {
	s := script
	for len(s) > 0 {
		s = strings.TrimLeft(s, " \t\n;{}!")
		// Address: line numbers, $, /regex/, \cregexc, ranges, steps.
		for len(s) > 0 {
			switch ch := s[0]; {
			case ch >= '0' && ch <= '9' || ch == '$' || ch == ',' || ch == '~' || ch == '+' || ch == ' ' || ch == '!':
				s = s[1:]
			case ch == '/' || ch == '\\':
				delim := byte('/')
				if ch == '\\' && len(s) > 1 {
					delim, s = s[1], s[1:]
				}
				s = skipDelimited(s[1:], delim)
				for len(s) > 0 && (s[0] == 'I' || s[0] == 'M') {
					s = s[1:]
				}
			default:
				goto command
			}
		}
	command:
		if len(s) == 0 {
			return
		}
		cmd := s[0]
		s = s[1:]
		switch cmd {
		case 's', 'y':
			if len(s) == 0 {
				return
			}
			delim := s[0]
			s = skipDelimited(s[1:], delim)
			s = skipDelimited(s, delim)
			end := strings.IndexAny(s, ";\n}")
			flags := s
			if end >= 0 {
				flags, s = s[:end], s[end:]
			} else {
				s = ""
			}
			if !f(cmd, flags) {
				return
			}
		case 'a', 'i', 'c', 'r', 'R', 'w', 'W', 'e', 'b', 't', 'T', ':', 'q', 'Q', 'l', 'L', 'v', 'F', 'z':
			end := strings.IndexByte(s, '\n')
			if cmd == 'b' || cmd == 't' || cmd == 'T' || cmd == 'q' || cmd == 'Q' || cmd == 'l' || cmd == 'L' {
				end = strings.IndexAny(s, ";\n}")
			}
			arg := s
			if end >= 0 {
				arg, s = s[:end], s[end:]
			} else {
				s = ""
			}
			if !f(cmd, arg) {
				return
			}
		default:
			if !f(cmd, "") {
				return
			}
		}
	}
}

func skipDelimited(s string, delim byte) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == delim {
			return s[i+1:]
		}
	}
	return ""
}

// sedExecutes reports the e command or the e flag of s.
func sedExecutes(script string) bool {
	found := false
	sedCommands(script, func(cmd byte, rest string) bool {
		if cmd == 'e' || cmd == 's' && strings.ContainsRune(sedFlags(rest), 'e') {
			found = true
			return false
		}
		return true
	})
	return found
}

// sedFlags are the flags of an s command, without a w filename.
func sedFlags(rest string) string {
	if i := strings.IndexByte(rest, 'w'); i >= 0 {
		return rest[:i]
	}
	return rest
}

// sedWriteFiles returns the files a sed script writes with w, W or s///w.
func sedWriteFiles(script string) []string {
	var out []string
	sedCommands(script, func(cmd byte, rest string) bool {
		switch cmd {
		case 'w', 'W':
			out = append(out, strings.TrimSpace(rest))
		case 's':
			if i := strings.IndexByte(rest, 'w'); i >= 0 {
				out = append(out, strings.TrimSpace(rest[i+1:]))
			}
		}
		return true
	})
	return out
}
