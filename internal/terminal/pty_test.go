//go:build unix

package terminal_test

import (
	"context"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/terminal"
)

// session runs argv on a real pseudo-terminal whose output is drawn on a
// Screen that answers the program's queries through the master.
type session struct {
	screen *terminal.Screen
	master io.Writer
	done   chan runner.Result
}

func runOnScreen(t *testing.T, cols, rows int, argv ...string) *session {
	t.Helper()
	if _, err := exec.LookPath(argv[0]); err != nil {
		t.Skip(argv[0], "not installed")
	}
	master, slave, err := runner.OpenTerminal(cols, rows)
	if err != nil {
		t.Fatal(err)
	}
	sup := runner.NewSupervisor()
	s := &session{screen: terminal.New(cols, rows, 2000, master), master: master, done: make(chan runner.Result, 1)}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(s.screen, master)
	}()
	go func() {
		res, err := sup.Run(context.Background(), runner.Spec{Argv: argv, Terminal: slave, Timeout: 30 * time.Second,
			Env: []string{"TERM=xterm-256color", "PATH=/usr/local/bin:/usr/bin:/bin", "PS1=$ "}})
		if err != nil {
			t.Error(err)
		}
		s.done <- res
	}()
	t.Cleanup(func() {
		sup.Close()
		master.Close()
		<-copied
		s.screen.Close()
	})
	return s
}

func (s *session) waitScreen(t *testing.T, what string, ok func(text string) bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok(s.screen.Scrollback(0)) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: never seen; screen:\n%s", what, s.screen.Scrollback(0))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSeqOnTerminal(t *testing.T) {
	s := runOnScreen(t, 80, 24, "seq", "1", "1000")
	<-s.done
	s.waitScreen(t, "1000", func(text string) bool { return strings.HasSuffix(text, "\n1000") })
	if got := s.screen.Scrollback(3); got != "998\n999\n1000" {
		t.Errorf("Scrollback(3) = %q", got)
	}
	if got := s.screen.Text(); !strings.HasPrefix(got, "978\n") {
		t.Errorf("Text() starts %q, want 978…1000 and the cursor's empty line", got[:min(len(got), 20)])
	}
}

// A program asking where the cursor is gets the answer from the Screen.
func TestCursorQueryAnswered(t *testing.T) {
	s := runOnScreen(t, 80, 24, "bash", "--norc", "--noprofile", "-c",
		`printf 'abc\033[6n'; IFS= read -rs -d R -t 10 pos; echo; echo "row;col=${pos#*[}"`)
	res := <-s.done
	s.waitScreen(t, "the answer", func(text string) bool { return strings.Contains(text, "row;col=") })
	if !strings.Contains(s.screen.Text(), "row;col=1;4") || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Errorf("exit %+v, screen:\n%s", res, s.screen.Text())
	}
}

// Keys typed into a REPL on the terminal: a line, then Ctrl-D to leave.
func TestREPLWithKeys(t *testing.T) {
	lane.Live(t)
	s := runOnScreen(t, 80, 24, "python3", "-q")
	s.waitScreen(t, "the prompt", func(text string) bool { return strings.HasSuffix(text, ">>>") })
	enter, _ := terminal.Keys("Enter")
	io.WriteString(s.master, "print(6*7)"+string(enter))
	s.waitScreen(t, "42", func(text string) bool { return strings.Contains(text, "\n42\n>>>") })
	ctrlD, _ := terminal.Keys("Ctrl-D")
	s.master.Write(ctrlD)
	if res := <-s.done; res.ExitCode == nil || *res.ExitCode != 0 {
		t.Errorf("python3 after Ctrl-D: %+v", res)
	}
}
