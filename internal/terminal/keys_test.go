package terminal

import (
	"strings"
	"testing"
)

func TestKeys(t *testing.T) {
	tests := []struct {
		names []string
		want  string
	}{
		{[]string{"Enter"}, "\r"},
		{[]string{"enter", "TAB", "Esc", "escape"}, "\r\t\x1b\x1b"},
		{[]string{"Backspace", "Delete", "Space"}, "\x7f\x1b[3~ "},
		{[]string{"Up", "Down", "Right", "Left"}, "\x1b[A\x1b[B\x1b[C\x1b[D"},
		{[]string{"Home", "End", "PageUp", "PageDown", "page_up", "Page-Down"}, "\x1b[H\x1b[F\x1b[5~\x1b[6~\x1b[5~\x1b[6~"},
		{[]string{"F1", "f4", "F5", "F10", "F12"}, "\x1bOP\x1bOS\x1b[15~\x1b[21~\x1b[24~"},
		{[]string{"Ctrl-C", "ctrl+c", "C-c", "^C", "^c", "Control-C"}, "\x03\x03\x03\x03\x03\x03"},
		{[]string{"Ctrl-A", "Ctrl-D", "Ctrl-Z"}, "\x01\x04\x1a"},
		{[]string{`Ctrl-\`, `^\`, "Ctrl-[", "Ctrl-@"}, "\x1c\x1c\x1b\x00"},
		{[]string{"Shift-Tab"}, "\x1b[Z"},
		{nil, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.names, ","), func(t *testing.T) {
			got, err := Keys(tt.names...)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("Keys(%q) = %q, want %q", tt.names, got, tt.want)
			}
		})
	}
}

func TestKeysUnknown(t *testing.T) {
	for _, name := range []string{"Enterr", "Ctrl-1", "C-", "^", "F13", "", "Ctrl-CC"} {
		_, err := Keys("Enter", name)
		if err == nil {
			t.Errorf("Keys(%q) succeeded", name)
			continue
		}
		for _, want := range []string{`"` + name + `"`, "Enter", "Ctrl-A", "PageUp", "F1"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Keys(%q) error %q does not mention %s", name, err, want)
			}
		}
	}
}
