package terminal

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func render(t *testing.T, cols, rows int, in string) *Screen {
	t.Helper()
	s := New(cols, rows, 100, nil)
	t.Cleanup(func() { s.Close() })
	if n, err := s.Write([]byte(in)); err != nil || n != len(in) {
		t.Fatalf("Write = %d, %v", n, err)
	}
	return s
}

func TestText(t *testing.T) {
	lane.Live(t)
	tests := []struct {
		name, in, want string
	}{
		{"plain lines", "hello\r\nworld\r\n", "hello\nworld"},
		{"colours are dropped", "\x1b[1;31mred\x1b[0m and \x1b[38;5;82mgreen\x1b[m", "red and green"},
		{"carriage return overwrites", "downloading 10%\rdownloading 99%", "downloading 99%"},
		{"backspace overwrites", "abc\b\bX", "aXc"},
		{"clear screen", "old stuff\r\nmore\x1b[2J\x1b[Hnew", "new"},
		{"cursor addressing", "\x1b[3;5Hthree\x1b[1;1Hone", "one\n\n    three"},
		{"erase to end of line", "keep this\x1b[5G\x1b[K", "keep"},
		{"trailing spaces trimmed", "a    \r\nb\t\r\n", "a\nb"},
		{"wide characters once", "日本語 ok\r\n🙂!", "日本語 ok\n🙂!"},
		{"long line wraps", strings.Repeat("x", 25), strings.Repeat("x", 20) + "\nxxxxx"},
		{"alternate screen shows its content",
			"shell$ \x1b[?1049h\x1b[H\x1b[2JTUI title\x1b[5;1Hstatus bar", "TUI title\n\n\n\nstatus bar"},
		{"leaving the alternate screen restores the shell",
			"shell$ \x1b[?1049h\x1b[2J\x1b[HTUI\x1b[?1049l", "shell$"},
		{"scrolls when full", "1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n7", "3\n4\n5\n6\n7"},
		{"OSC title is not text", "\x1b]0;my title\x07prompt$ ", "prompt$"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := render(t, 20, 5, tt.in)
			if diff := cmp.Diff(tt.want, s.Text()); diff != "" {
				t.Errorf("Text() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A redraw like top's or a progress UI's: the screen shows the last frame only.
func TestTUIRedraw(t *testing.T) {
	var b strings.Builder
	b.WriteString("\x1b[?1049h\x1b[?25l") // alternate screen, hide cursor
	for frame := 1; frame <= 3; frame++ {
		fmt.Fprintf(&b, "\x1b[H\x1b[2J\x1b[7m PID  CPU%%  frame %d \x1b[0m\r\n", frame)
		fmt.Fprintf(&b, "\x1b[32m%4d\x1b[0m  %3d.0  worker\r\n", 100+frame, frame*10)
		b.WriteString("\x1b[24;1H\x1b[1mq\x1b[0m quit")
	}
	s := render(t, 40, 24, b.String())
	want := " PID  CPU%  frame 3\n 103   30.0  worker" + strings.Repeat("\n", 22) + "q quit"
	if diff := cmp.Diff(want, s.Text()); diff != "" {
		t.Errorf("Text() mismatch (-want +got):\n%s", diff)
	}
	if !s.AltScreen() {
		t.Error("AltScreen() = false after ESC[?1049h")
	}
}

func TestScrollback(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "%d\r\n", i)
	}
	s := New(80, 24, 300, nil)
	defer s.Close()
	s.Write([]byte(b.String()))

	if got, want := s.Scrollback(3), "998\n999\n1000"; got != want {
		t.Errorf("Scrollback(3) = %q, want %q", got, want)
	}
	all := strings.Split(s.Scrollback(0), "\n")
	// 300 kept lines scrolled off, then the screen's 23 lines (the 24th is empty).
	if len(all) != 323 || all[0] != "678" || all[len(all)-1] != "1000" {
		t.Errorf("Scrollback(0): %d lines, %q … %q; want 323, 678 … 1000", len(all), all[0], all[len(all)-1])
	}
	if got := s.Text(); !strings.HasPrefix(got, "978\n") || !strings.HasSuffix(got, "\n1000") {
		t.Errorf("Text() = %q, want 978…1000", got)
	}
}

// Memory stays bounded whatever is written: only the last lines are kept.
func TestScrollbackBounded(t *testing.T) {
	s := New(80, 24, 50, nil)
	defer s.Close()
	line := []byte(strings.Repeat("z", 79) + "\r\n")
	for range 5000 {
		s.Write(line)
	}
	if n := strings.Count(s.Scrollback(0), "\n") + 1; n != 50+23 {
		t.Errorf("Scrollback(0) has %d lines, want %d", n, 50+23)
	}
	if len(s.hist.buf) != 50 {
		t.Errorf("history holds %d lines, want 50", len(s.hist.buf))
	}
}

// Programs asking the terminal get the answers a real one gives.
func TestReplies(t *testing.T) {
	tests := []struct{ query, want string }{
		{"\x1b[6n", "\x1b[2;4R"},       // cursor position report: row 2, column 4
		{"\x1b[c", "\x1b[?62;1;6;22c"}, // primary device attributes
		{"\x1b[5n", "\x1b[0n"},         // status: OK
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q", tt.query), func(t *testing.T) {
			got := make(chan []byte, 1)
			s := New(80, 24, 0, writerFunc(func(p []byte) (int, error) {
				got <- bytes.Clone(p)
				return len(p), nil
			}))
			defer s.Close()
			s.Write([]byte("a\r\nabc" + tt.query))
			select {
			case b := <-got:
				if string(b) != tt.want {
					t.Errorf("reply %q, want %q", b, tt.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("no reply")
			}
		})
	}
}

// A reply writer that blocks (a program that never reads its input) does not
// block the screen.
func TestReplyWriterBlocked(t *testing.T) {
	release := make(chan struct{})
	s := New(80, 24, 0, writerFunc(func(p []byte) (int, error) {
		<-release
		return len(p), nil
	}))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100000 {
			s.Write([]byte("\x1b[6n"))
		}
		s.Write([]byte("still drawing"))
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Write blocked behind the reply writer")
	}
	if got := s.Text(); got != "still drawing" {
		t.Errorf("Text() = %q", got)
	}
	close(release)
	s.Close()
}

func TestConcurrentUse(t *testing.T) {
	s := New(80, 24, 100, nil)
	defer s.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := range 2000 {
			fmt.Fprintf(s, "line %d\r\n", i)
		}
	}()
	go func() {
		defer wg.Done()
		for range 200 {
			_ = s.Text()
			_ = s.Scrollback(10)
		}
	}()
	wg.Wait()
	if got := s.Scrollback(1); got != "line 1999" {
		t.Errorf("Scrollback(1) = %q", got)
	}
}

func TestWriteAfterClose(t *testing.T) {
	s := New(10, 2, 0, nil)
	s.Write([]byte("kept"))
	s.Close()
	if _, err := s.Write([]byte("x")); err == nil {
		t.Error("Write after Close succeeded")
	}
	if s.Text() != "kept" {
		t.Errorf("Text() after Close = %q", s.Text())
	}
}

// Real programs' terminal output renders to what a person sees.
func TestRealPrograms(t *testing.T) {
	lane.Live(t)
	tests := []struct {
		name    string
		argv    []string
		env     []string
		check   func(text string) bool
		explain string
	}{
		{"printf with colours", []string{"printf", `\033[1;32mPASS\033[0m ok\r\n\033[31mFAIL\033[0m bad\r\n`}, nil,
			func(s string) bool { return s == "PASS ok\nFAIL bad" }, "PASS ok / FAIL bad"},
		{"top -b", []string{"top", "-b", "-n", "1", "-w", "80", "-p", "1"}, []string{"TERM=xterm", "COLUMNS=80"},
			func(s string) bool {
				return strings.HasPrefix(s, "top - ") && strings.Contains(s, "PID") && !strings.Contains(s, "\x1b")
			}, "a top header, no escapes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, err := exec.LookPath(tt.argv[0])
			if err != nil {
				t.Skip(tt.argv[0], "not installed")
			}
			cmd := exec.Command(path, tt.argv[1:]...)
			cmd.Env = append(cmd.Environ(), tt.env...)
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			s := New(80, 200, 0, nil)
			defer s.Close()
			// A pty turns \n into \r\n; these ran on pipes.
			s.Write(bytes.ReplaceAll(bytes.ReplaceAll(out, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n")))
			if got := s.Text(); !tt.check(got) {
				t.Errorf("Text() = %q, want %s", got, tt.explain)
			}
		})
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
