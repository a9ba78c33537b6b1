package hint

import (
	"fmt"
	"strconv"
	"strings"
)

// TOMLString is s as a TOML basic string, for advice a user pastes into a
// configuration file ([policy] allow = [TOMLString(p)]): Go's %q writes a
// control character as \x1b, which TOML does not read, so this escapes it as
// \u001B, and every other character Go would not print as it is, so that it
// shows. The result is a Go string literal too. s must be valid UTF-8, as a
// TOML file is (policy.Verdict.AllowPattern is).
func TOMLString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			switch {
			case r == ' ' || strconv.IsPrint(r):
				b.WriteRune(r)
			case r > 0xFFFF:
				fmt.Fprintf(&b, `\U%08X`, r)
			default:
				fmt.Fprintf(&b, `\u%04X`, r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
