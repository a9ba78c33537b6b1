package shellgate

import (
	"fmt"
	"strings"
)

// normalKey is a key name as looked up: lower case, "C-c" and "^C" as "ctrl-c".
func normalKey(name string) string {
	k := strings.ToLower(strings.TrimSpace(name))
	switch {
	case strings.HasPrefix(k, "c-"):
		k = "ctrl-" + k[2:]
	case strings.HasPrefix(k, "^") && len(k) == 2:
		k = "ctrl-" + k[1:]
	case strings.HasPrefix(k, "ctrl+"):
		k = "ctrl-" + k[5:]
	}
	return k
}

var namedKeys = map[string]string{
	"enter": "\r", "return": "\r", "tab": "\t", "escape": "\x1b", "esc": "\x1b",
	"backspace": "\x7f", "space": " ", "up": "\x1b[A", "down": "\x1b[B", "right": "\x1b[C", "left": "\x1b[D",
	"home": "\x1b[H", "end": "\x1b[F", "delete": "\x1b[3~", "pageup": "\x1b[5~", "pagedown": "\x1b[6~",
}

// keyBytes is what a key sends: Enter is "\r" on a terminal, "\n" on a pipe.
func keyBytes(name string, tty bool) ([]byte, error) {
	k := normalKey(name)
	if k == "enter" || k == "return" {
		if tty {
			return []byte("\r"), nil
		}
		return []byte("\n"), nil
	}
	if s, ok := namedKeys[k]; ok {
		return []byte(s), nil
	}
	if c, ok := strings.CutPrefix(k, "ctrl-"); ok && len(c) == 1 {
		switch b := c[0]; {
		case 'a' <= b && b <= 'z':
			return []byte{b - 'a' + 1}, nil
		case b == '\\':
			return []byte{0x1c}, nil
		case b == '[':
			return []byte{0x1b}, nil
		}
	}
	return nil, fmt.Errorf("unknown key %q; keys are Enter, Tab, Escape, Backspace, Space, Up, Down, Left, Right, Home, End, Delete, PageUp, PageDown and Ctrl-A … Ctrl-Z, Ctrl-\\", name)
}
