package hint

import (
	"strconv"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// TestTOMLString: what TOMLString writes reads back as the string it was, as
// a TOML value and as a Go literal, whatever characters it holds.
func TestTOMLString(t *testing.T) {
	for _, tt := range []struct{ name, s, want string }{
		{"plain", "docker run alpine true", `"docker run alpine true"`},
		{"quotes", `python3 -c "print('\"')"`, `"python3 -c \"print('\\\"')\""`},
		{"escape", "docker run alpine '\x1b[31m'", `"docker run alpine '\u001B[31m'"`},
		{"nul and del", "a\x00b\x7f", `"a\u0000b\u007F"`},
		{"newline and tab", "python3 -c 'import os\n\tprint(1)'", `"python3 -c 'import os\n\tprint(1)'"`},
		{"invisible", "echo a\u200bb", `"echo a\u200Bb"`},
		{"beyond the BMP", "echo \U000E0041 ok é", `"echo \U000E0041 ok é"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := TOMLString(tt.s)
			if got != tt.want {
				t.Errorf("TOMLString(%q) = %s, want %s", tt.s, got, tt.want)
			}
			var doc struct {
				Policy struct{ Allow []string }
			}
			if err := toml.Unmarshal([]byte("[policy]\nallow = ["+got+"]\n"), &doc); err != nil || len(doc.Policy.Allow) != 1 || doc.Policy.Allow[0] != tt.s {
				t.Errorf("TOML reads %s back as %q (%v), want %q", got, doc.Policy.Allow, err, tt.s)
			}
			if back, err := strconv.Unquote(got); err != nil || back != tt.s {
				t.Errorf("Go reads %s back as %q (%v), want %q", got, back, err, tt.s)
			}
		})
	}
}
