package terminal

import (
	"fmt"
	"strings"
)

// keys maps lower-case key names to the bytes a terminal (xterm, in normal
// cursor mode) sends for them.
var keys = map[string]string{
	"enter": "\r", "return": "\r",
	"tab": "\t", "shift-tab": "\x1b[Z", "backtab": "\x1b[Z",
	"escape": "\x1b", "esc": "\x1b",
	"backspace": "\x7f",
	"space":     " ",
	"insert":    "\x1b[2~", "delete": "\x1b[3~", "del": "\x1b[3~",
	"up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
	"home": "\x1b[H", "end": "\x1b[F",
	"pageup": "\x1b[5~", "pagedown": "\x1b[6~", "pgup": "\x1b[5~", "pgdn": "\x1b[6~",
	"f1": "\x1bOP", "f2": "\x1bOQ", "f3": "\x1bOR", "f4": "\x1bOS",
	"f5": "\x1b[15~", "f6": "\x1b[17~", "f7": "\x1b[18~", "f8": "\x1b[19~",
	"f9": "\x1b[20~", "f10": "\x1b[21~", "f11": "\x1b[23~", "f12": "\x1b[24~",
}

// ctrlPunct are the control characters typed with Ctrl and a punctuation key.
var ctrlPunct = map[string]byte{
	"@": 0x00, "space": 0x00, "[": 0x1b, "\\": 0x1c, "]": 0x1d, "^": 0x1e, "_": 0x1f, "?": 0x7f,
}

// KeyNames is the list of valid names given in Keys' error.
const KeyNames = "Enter, Tab, Shift-Tab, Escape (Esc), Backspace, Space, Insert, Delete, " +
	"Up, Down, Left, Right, Home, End, PageUp, PageDown, F1…F12, " +
	"Ctrl-A…Ctrl-Z (also written C-a, ^A, Ctrl+A), Ctrl-@, Ctrl-[, Ctrl-\\, Ctrl-], Ctrl-^, Ctrl-_"

// Keys returns the bytes a terminal sends when the named keys are pressed one
// after the other. Names are case-insensitive; Ctrl-C may also be written
// ctrl+c, control-c, C-c or ^C. An unknown name is an error that lists the
// valid ones.
func Keys(names ...string) ([]byte, error) {
	var out []byte
	for _, name := range names {
		b, ok := key(name)
		if !ok {
			return nil, fmt.Errorf("terminal: unknown key %q; valid keys: %s", name, KeyNames)
		}
		out = append(out, b...)
	}
	return out, nil
}

func key(name string) (string, bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if s, ok := keys[strings.ReplaceAll(n, "_", "-")]; ok {
		return s, true
	}
	if s, ok := keys[strings.NewReplacer("-", "", "_", "", " ", "").Replace(n)]; ok {
		return s, true // page-up, Page_Down, shift_tab…
	}
	rest, ok := cutCtrl(n)
	if !ok || rest == "" {
		return "", false
	}
	if len(rest) == 1 && rest[0] >= 'a' && rest[0] <= 'z' {
		return string(rune(rest[0] - 'a' + 1)), true
	}
	if b, ok := ctrlPunct[rest]; ok {
		return string(rune(b)), true
	}
	return "", false
}

// cutCtrl strips a Ctrl modifier written in any of the usual ways.
func cutCtrl(n string) (string, bool) {
	for _, prefix := range []string{"ctrl-", "ctrl+", "control-", "control+", "c-", "^"} {
		if rest, ok := strings.CutPrefix(n, prefix); ok {
			return rest, true
		}
	}
	return "", false
}
