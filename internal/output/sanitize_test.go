package output

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	tests := []struct {
		name, in, want string
		removed        bool
	}{
		{"plain", "hello\n\tworld\n", "hello\n\tworld\n", false},
		{"cjk and emoji", "日本語 😀 👩‍💻 é\n", "日本語 😀 👩‍💻 é\n", false},
		{"empty", "", "", false},
		{"carriage return overwrites", "a\rb\n", "b\n", true},
		{"progress bar shows its last state", "10%\r20%\r100%\ndone\n", "100%\ndone\n", true},
		{"erase to the end of the line", "downloading 50%\r\x1b[Kok\n", "ok\n", true},
		{"erase the whole line", "abc\x1b[2Kd\n", "   d\n", true},
		{"shorter overwrite keeps the rest, as a terminal does", "abcdef\rXY\n", "XYcdef\n", true},
		{"crlf", "one\r\ntwo\r\n", "one\ntwo\n", false},
		{"carriage return at the end", "abc\r", "abc", false},
		{"backspace overstrike", "X\bX_\bY\n", "XY\n", true},
		{"backspace at line start", "\bab\n", "ab\n", false},
		{"colour", "\x1b[31mred\x1b[0m\n", "red\n", false},
		{"256 and true colour", "\x1b[38;5;196ma\x1b[38:2::255:0:0mb\x1b[m\n", "ab\n", false},
		{"window title (OSC, BEL)", "\x1b]0;title\x07text\n", "text\n", true},
		{"window title (OSC, ST)", "\x1b]2;pwned\x1b\\text\n", "text\n", true},
		{"clear screen", "secret\x1b[2J\x1b[Hshown\n", "secretshown\n", true},
		{"hyperlink", "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\\n", "click\n", true},
		{"cursor up and erase line", "rm -rf ~\n\x1b[1A\x1b[2Kls\n", "rm -rf ~\nls\n", true},
		{"8-bit CSI", "a\x9b31mb\n", "ab\n", true},
		{"UTF-8 CSI (U+009B)", "a\u009b31mb\n", "ab\n", true},
		{"8-bit OSC", "a\x9d0;t\x9cb\n", "ab\n", true},
		{"DCS", "a\x1bPq#0;2;0;0;0\x1b\\b\n", "ab\n", true},
		{"two-byte ESC", "a\x1b7b\x1b8c\n", "abc\n", true},
		{"bell and other C0", "a\x07b\x0bc\x0cd\x7f\n", "abcd\n", true},
		{"NUL-separated names", "a.txt\x00b c.go\x00", "a.txt␀b c.go␀", false},
		{"a NUL beside a ␀ of its own", "␀\x00", "␀␀", true},
		{"stray invalid bytes", "a\xff\xfeb\n", "a\uFFFDb\n", false},
		{"unterminated OSC keeps the text after it", "a\x1b]0;title\nmore\n", "a0;title\nmore\n", true},
		{"a string sequence does not swallow lines", "a\x9e\nb\x9cc\n", "a\nbc\n", true},
		{"ESC at the end", "abc\x1b", "abc", true},
		{"CSI cut at the end", "abc\x1b[3", "abc3", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, removed := sanitize([]byte(tt.in))
			if got != tt.want || removed != tt.removed {
				t.Errorf("sanitize(%q) = %q, %v; want %q, %v", tt.in, got, removed, tt.want, tt.removed)
			}
		})
	}
}

// TestCaptureControlsAttack: output that would paint over the screen, retitle the
// window or hide a link reaches the text only as the characters it shows, in any
// chunking; the spill file keeps the bytes as printed.
func TestCaptureControlsAttack(t *testing.T) {
	attack := "start\n" +
		"\x1b]0;innocent title\x07" +
		"\x1b[2J\x1b[H" +
		"\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\\n" +
		"\x1b[31mred\x1b[0m\n" +
		"rm -rf ~\r\x1b[1A\x1b[2K\x1b[10Cgit status\n" +
		"c1 \x9b2J csi\n" +
		"日本語 😀 ok\n"
	for _, chunk := range []int{1, 2, 3, 7, 4096} {
		dir := t.TempDir()
		c := New(Options{SpillDir: dir, Name: "stdout"})
		writeChunks(t, c, []byte(attack), chunk)
		r := c.Close()
		if !r.Controls {
			t.Errorf("chunk %d: Controls = false", chunk)
		}
		if i := strings.IndexFunc(r.Text, isControl); i >= 0 {
			t.Errorf("chunk %d: control %q survives in %q", chunk, r.Text[i:i+1], r.Text)
		}
		for _, gone := range []string{"innocent title", "evil.example", "[2J", "[31m", "2J"} {
			if strings.Contains(r.Text, gone) {
				t.Errorf("chunk %d: %q survives in %q", chunk, gone, r.Text)
			}
		}
		for _, kept := range []string{"start\n", "docs\n", "red\n", "日本語 😀 ok\n", "c1  csi\n"} {
			if !strings.Contains(r.Text, kept) {
				t.Errorf("chunk %d: %q missing from %q", chunk, kept, r.Text)
			}
		}
		if r.SpillPath == "" {
			t.Fatalf("chunk %d: no spill file keeps the raw output (err %v)", chunk, r.SpillErr)
		}
		raw, err := os.ReadFile(r.SpillPath)
		if err != nil || string(raw) != attack {
			t.Errorf("chunk %d: spill file = %q, %v; want the bytes as printed", chunk, raw, err)
		}
	}
}

// TestCaptureControlsTruncated: head and tail of cut output are sanitized too, and
// so are the digest's lines.
func TestCaptureControlsTruncated(t *testing.T) {
	in := strings.Repeat("\x1b[32mok\x1b[0m line\x1b[K\n", 200) + "\x1b[31mERROR: \x1b]0;x\x07bad\x1b[0m\n" + strings.Repeat("\x1b[32mok\x1b[0m line\n", 200)
	c := New(Options{Limit: 512, SpillDir: t.TempDir()})
	writeChunks(t, c, []byte(in), 100)
	r := c.Close()
	if !r.Truncated || !r.Controls {
		t.Fatalf("Truncated = %v, Controls = %v", r.Truncated, r.Controls)
	}
	if strings.ContainsRune(r.Text, 0x1b) || !strings.Contains(r.Text, "ok line\n") {
		t.Errorf("Text = %q", r.Text)
	}
	if len(r.Digest) != 1 || r.Digest[0].Text != "ERROR: bad" {
		t.Errorf("Digest = %+v, want the ERROR line without its escapes", r.Digest)
	}
}

// TestCaptureControlsNoSpill: output the user saw live gets sanitized text and no file.
func TestCaptureControlsNoSpill(t *testing.T) {
	c := New(Options{SpillDir: t.TempDir(), NoSpill: true})
	c.Write([]byte("\x1b]0;title\x07\x1b[1mbold\x1b[0m\n"))
	r := c.Close()
	if r.Text != "bold\n" || !r.Controls || r.SpillPath != "" {
		t.Errorf("Result = %q, Controls %v, spill %q", r.Text, r.Controls, r.SpillPath)
	}
}

// Coloured output loses its colours and nothing else: no note of controls
// removed, no spill file of the bytes as printed.
func TestCaptureColourOnly(t *testing.T) {
	dir := t.TempDir()
	c := New(Options{SpillDir: dir})
	c.Write([]byte("\x1b[32mPASS\x1b[0m ok\n\x1b[1;31mFAIL\x1b[0m x\n"))
	r := c.Close()
	if r.Text != "PASS ok\nFAIL x\n" || r.Controls || r.SpillPath != "" {
		t.Errorf("Result = %q, Controls %v, spill %q", r.Text, r.Controls, r.SpillPath)
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"a\rb\n", "\x1b[31mx", "\x1b]8;;u\x1b\\l", "\x9b2J", "\u009b1m", "日本\b\bx", "\xff\x1b"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, removed := sanitize(in)
		if !utf8.ValidString(got) {
			t.Fatalf("not UTF-8: %q", got)
		}
		if i := strings.IndexFunc(got, isControl); i >= 0 {
			t.Fatalf("control at %d in %q", i, got)
		}
		if strings.Count(got, "\n") != strings.Count(string(in), "\n") {
			t.Fatalf("lines changed: %q → %q", in, got)
		}
		if !removed && plain(in) && got != string(in) {
			t.Fatalf("plain %q changed to %q", in, got)
		}
	})
}
