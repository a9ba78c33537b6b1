package policy

import (
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
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
		s = skipSedAddress(strings.TrimLeft(s, " \t\n;{}!"))
		if len(s) == 0 {
			return
		}
		cmd, rest := s[0], s[1:]
		if (cmd == 's' || cmd == 'y') && rest == "" {
			return
		}
		var arg string
		arg, s = sedArgument(cmd, rest)
		if !f(cmd, arg) {
			return
		}
	}
}

// skipSedAddress removes the address before a sed command: line numbers, $,
// /regex/, \cregexc, ranges, steps.
func skipSedAddress(s string) string {
	for len(s) > 0 {
		switch ch := s[0]; {
		case ch >= '0' && ch <= '9' || strings.IndexByte("$,~+ !", ch) >= 0:
			s = s[1:]
		case ch == '/' || ch == '\\':
			delim := byte('/')
			if ch == '\\' && len(s) > 1 {
				delim, s = s[1], s[1:]
			}
			s = strings.TrimLeft(skipDelimited(s[1:], delim), "IM")
		default:
			return s
		}
	}
	return s
}

// sedArgument splits what follows a sed command letter into the command's
// argument (an s command's flags, a file name, a label, text) and the rest
// of the script.
func sedArgument(cmd byte, s string) (arg, rest string) {
	var end int
	switch {
	case cmd == 's' || cmd == 'y':
		if len(s) == 0 {
			return "", ""
		}
		delim := s[0]
		s = skipDelimited(skipDelimited(s[1:], delim), delim)
		end = strings.IndexAny(s, ";\n}")
	case strings.IndexByte("btTqQlL", cmd) >= 0:
		end = strings.IndexAny(s, ";\n}")
	case strings.IndexByte("aicrRwWe:vFz", cmd) >= 0:
		end = strings.IndexByte(s, '\n')
	default:
		return "", s
	}
	if end < 0 {
		return s, ""
	}
	return s[:end], s[end:]
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

// sedReadFiles are the files a sed script reads besides its input: r FILE
// and R FILE append a file's text (or a line of it) to the output.
func sedReadFiles(script string) []string {
	var out []string
	sedCommands(script, func(cmd byte, rest string) bool {
		if cmd == 'r' || cmd == 'R' {
			out = append(out, strings.TrimSpace(rest))
		}
		return true
	})
	return out
}
