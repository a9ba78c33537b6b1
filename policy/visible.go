package policy

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible makes control characters and escape sequences in s visible, so that
// a command shown for approval cannot paint itself as another one (carriage
// returns, ANSI escapes, backspaces, bidirectional overrides, zero-width
// characters). Newlines and tabs are kept: commands span lines.
func Visible(s string) string {
	clean := true
	for _, r := range s {
		if hidden(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		raw := s[i : i+size]
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, raw[0]) // not UTF-8: a terminal may take 0x9b for CSI
		case r == '\r':
			b.WriteString(`\r`)
		case r == 0x1b:
			b.WriteString(`\e`)
		case r < 0x80 && hidden(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteString(raw)
		}
	}
	return b.String()
}

func hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0, r == unicode.ReplacementChar:
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0xfeff, r == 0x2028, r == 0x2029:
		return true
	}
	return !unicode.IsPrint(r) && !unicode.IsSpace(r)
}
