//go:build unix

package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
)

// termRun is a command running on a pseudo-terminal: output collects what the
// master reads, and result delivers Run's outcome.
type termRun struct {
	master *os.File
	output *syncBuffer
	result chan Result
	read   chan struct{} // closed when reading the master ends (all slave holders gone)
}

// startOnTerminal runs argv on a new cols×rows terminal. The master is closed,
// and the run awaited, when the test ends.
func startOnTerminal(t *testing.T, s *Supervisor, spec Spec, argv ...string) *termRun {
	t.Helper()
	master, slave, err := OpenTerminal(100, 30)
	if err != nil {
		t.Fatal(err)
	}
	r := &termRun{master: master, output: new(syncBuffer), result: make(chan Result, 1), read: make(chan struct{})}
	spec.Argv, spec.Terminal = argv, slave
	if spec.Timeout == 0 {
		spec.Timeout = 30 * time.Second
	}
	go func() {
		defer close(r.read)
		io.Copy(r.output, master)
	}()
	go func() {
		res, err := s.Run(context.Background(), spec)
		if err != nil {
			t.Errorf("Run(%q): %v", argv, err)
		}
		r.result <- res
	}()
	t.Cleanup(func() {
		master.Close()
		<-r.read
	})
	return r
}

func (r *termRun) wait(t *testing.T) Result {
	t.Helper()
	select {
	case res := <-r.result:
		return res
	case <-time.After(40 * time.Second):
		t.Fatal("Run did not return")
		return Result{}
	}
}

// waitOutput polls until the output contains want.
func (r *termRun) waitOutput(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(r.output.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output never contained %q; got %q", want, r.output.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A command on a terminal sees a terminal on stdin, stdout and stderr, of the
// size asked for, as its controlling terminal.
func TestTerminal(t *testing.T) {
	s := newSupervisor(t)
	script := `tty; [ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo all-ttys; stty size; ` +
		`exec 3</dev/tty && echo has-ctty; echo $((6*7)); exit 3`
	r := startOnTerminal(t, s, Spec{}, bash(t), "--noprofile", "--norc", "-c", script)
	res := r.wait(t)
	<-r.read // the master reads EIO once the command, the last holder of the slave, is gone
	out := r.output.String()
	for _, want := range []string{"/dev/pts/", "all-ttys\r\n", "30 100\r\n", "has-ctty\r\n", "42\r\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
	if describe(res.ExitCode) != "3" || res.TimedOut || res.Cancelled {
		t.Errorf("result %+v, want exit 3", res)
	}
}

// Input written to the master reaches the command, echoed as on a terminal,
// and Ctrl-C interrupts the foreground process, which only a controlling
// terminal does.
func TestTerminalInput(t *testing.T) {
	s := newSupervisor(t)
	r := startOnTerminal(t, s, Spec{}, bash(t), "--noprofile", "--norc", "-c",
		`read -p 'name? ' x; echo "hi $x"; exec sleep 600`)
	r.waitOutput(t, "name? ")
	io.WriteString(r.master, "world\r")
	r.waitOutput(t, "hi world\r\n")
	if out := r.output.String(); !strings.Contains(out, "name? world\r\n") {
		t.Errorf("the answer was not echoed: %q", out)
	}
	io.WriteString(r.master, "\x03")
	res := r.wait(t)
	if res.Signal != "SIGINT" || res.TimedOut {
		t.Errorf("after Ctrl-C: %+v, want killed by SIGINT", res)
	}
}

// On timeout the group on the terminal is killed, as without one.
func TestTerminalTimeout(t *testing.T) {
	lane.Live(t)
	s := newSupervisor(t)
	r := startOnTerminal(t, s, Spec{Timeout: 300 * time.Millisecond, KillGrace: 200 * time.Millisecond},
		bash(t), "--noprofile", "--norc", "-c", `trap '' TERM HUP; sleep 600 & sleep 601; wait`)
	res := r.wait(t)
	if !res.TimedOut || res.ExitCode != nil {
		t.Errorf("result %+v, want timed out and killed", res)
	}
	if m := groupMembers(res.PID, nil); len(m) > 0 {
		t.Errorf("process group %d still has %v", res.PID, m)
	}
}

func TestTerminalRefusesPipes(t *testing.T) {
	s := newSupervisor(t)
	master, slave, err := OpenTerminal(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	_, err = s.Run(context.Background(), Spec{Argv: []string{"true"}, Terminal: slave, Stdout: io.Discard})
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "terminal") {
		t.Errorf("Run with Terminal and Stdout: %v, want a StartError about the terminal", err)
	}
}

// A Launcher that cannot start terminal commands says so instead of starting
// the command without one.
func TestTerminalNeedsTerminalLauncher(t *testing.T) {
	s := newSupervisor(t)
	s.SetLauncher(plainLauncher{})
	master, slave, err := OpenTerminal(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	_, err = s.Run(context.Background(), Spec{Argv: []string{"true"}, Terminal: slave})
	if err == nil || !strings.Contains(err.Error(), "cannot start commands on a terminal") {
		t.Errorf("Run: %v", err)
	}
}

type plainLauncher struct{}

func (plainLauncher) Launch(argv, env []string, dir string, stdin, stdout, stderr *os.File, extra ...*os.File) (Launched, error) {
	return startChild(argv, env, dir, stdin, stdout, stderr, nil, extra...)
}
func (plainLauncher) Contains(int) bool { return true }

func TestOpenTerminalSize(t *testing.T) {
	if _, _, err := OpenTerminal(70000, 10); err == nil {
		t.Error("OpenTerminal(70000, 10) succeeded")
	}
}

// Run closes the terminal it is given even when the command is not started
// (here the supervisor is closed): reading the master then ends, instead of
// waiting for ever on a terminal only Run still held.
func TestTerminalClosedWhenNotStarted(t *testing.T) {
	master, slave, err := OpenTerminal(80, 24)
	if err != nil {
		t.Skip("no pseudo-terminal:", err)
	}
	defer master.Close()
	s := NewSupervisor()
	s.Close()
	if _, err := s.Run(context.Background(), Spec{Argv: []string{"true"}, Terminal: slave}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Run on a closed supervisor: %v, want ErrClosed", err)
	}
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, master)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("reading the master did not end: the terminal was left open")
	}
}

// goneLauncher is a terminal launcher whose session has ended: opening a
// terminal, or starting a command on one, fails with ErrLauncherGone as
// package sandbox's does.
type goneLauncher struct {
	plainLauncher
	opens bool // OpenTerminal works (it died after)
}

func (g goneLauncher) OpenTerminal(cols, rows int) (master, slave *os.File, err error) {
	if g.opens {
		return OpenTerminal(cols, rows)
	}
	return nil, nil, fmt.Errorf("sandbox: the session ended: %w", ErrLauncherGone)
}

func (goneLauncher) LaunchTerminal(argv, env []string, dir string, tty *os.File) (Launched, error) {
	return nil, fmt.Errorf("sandbox: the session ended: %w", ErrLauncherGone)
}

// liveLauncher starts terminal commands as children of this process.
type liveLauncher struct{ plainLauncher }

func (liveLauncher) LaunchTerminal(argv, env []string, dir string, tty *os.File) (Launched, error) {
	return startChild(argv, env, dir, nil, nil, nil, tty)
}

// A terminal command whose launcher is gone is handled as a plain one: the
// launcher is replaced before the terminal is opened, and the Result says so;
// when it went between the opening and the start, the error says to run it
// again, and the next one gets the new launcher.
func TestTerminalLauncherGone(t *testing.T) {
	lane.Live(t)
	for _, died := range []string{"before the terminal", "after the terminal"} {
		t.Run(died, func(t *testing.T) {
			s := newSupervisor(t)
			s.SetLauncher(goneLauncher{opens: died == "after the terminal"})
			renewed := 0
			s.OnLauncherGone(func() (Launcher, string, error) {
				renewed++
				s.SetLauncher(liveLauncher{})
				return liveLauncher{}, "a new session", nil
			})
			master, slave, note, err := s.OpenTerminal(80, 24)
			if err != nil {
				t.Fatal(err)
			}
			defer master.Close()
			go io.Copy(io.Discard, master)
			res, err := s.Run(context.Background(), Spec{Argv: []string{"sh", "-c", "exit 3"}, Terminal: slave, TerminalNote: note})
			if died == "before the terminal" {
				if err != nil || res.ExitCode == nil || *res.ExitCode != 3 || len(res.Notes) == 0 || res.Notes[0] != "a new session" || renewed != 1 {
					t.Errorf("Run: %v, %+v, renewed %d; want exit 3 with the note, renewed once", err, res, renewed)
				}
				return
			}
			if !errors.Is(err, ErrLauncherGone) || !strings.Contains(err.Error(), "run it again (a new session)") || renewed != 1 {
				t.Fatalf("Run: %v, renewed %d; want ErrLauncherGone saying to run it again", err, renewed)
			}
			master2, slave2, note, err := s.OpenTerminal(80, 24)
			if err != nil || note != "" {
				t.Fatalf("the next terminal: %v, note %q", err, note)
			}
			defer master2.Close()
			go io.Copy(io.Discard, master2)
			if res, err := s.Run(context.Background(), Spec{Argv: []string{"sh", "-c", "exit 4"}, Terminal: slave2}); err != nil || res.ExitCode == nil || *res.ExitCode != 4 {
				t.Errorf("run again: %v, %+v", err, res)
			}
		})
	}
}
