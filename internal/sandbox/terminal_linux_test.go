package sandbox

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/runner"
)

// A command started in a session on a terminal has it as stdin, stdout,
// stderr and controlling terminal. The terminal is the session's own
// (OpenTerminal), so its name is a /dev/pts/N of the session, and /dev/tty
// reaches it.
func TestTerminal(t *testing.T) {
	l := newLab(t)
	s := start(t, l.spec())
	bash, err := exec.LookPath("bash")
	must(t, err)
	master, slave, err := s.OpenTerminal(90, 20)
	must(t, err)
	defer master.Close()
	read := make(chan string)
	go func() {
		b, _ := io.ReadAll(master) // ends with EIO once no process holds the slave
		read <- string(b)
	}()
	sup := runner.NewSupervisor()
	defer sup.Close()
	sup.SetLauncher(s)
	script := `tty; [ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo all-ttys; stty size; ` +
		`echo via-dev-tty >/dev/tty; read -r -p 'name? ' x; echo "hi $x"; exit 4`
	started := make(chan int, 1)
	done := make(chan runner.Result, 1)
	go func() {
		res, err := sup.Run(context.Background(), runner.Spec{
			Argv: []string{bash, "--noprofile", "--norc", "-c", script}, Env: []string{"PATH=/usr/bin:/bin"},
			Dir: l.root, Terminal: slave, Timeout: 30 * time.Second,
			Started: func(pid int) { started <- pid },
		})
		if err != nil {
			t.Errorf("Run: %v", err)
			close(started)
		}
		done <- res
	}()
	// The command is in the session's PID namespace, yet /proc here shows its
	// process group in our numbering: the detector sees it wait at the prompt.
	pgid, ok := <-started
	if !ok {
		t.FailNow()
	}
	if !s.Contains(pgid) {
		t.Fatalf("PID %d is not in the session", pgid)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !runner.WaitingForInput(pgid, master) {
		if time.Now().After(deadline) {
			t.Fatal("the prompt was never seen waiting for input")
		}
		time.Sleep(5 * time.Millisecond)
	}
	io.WriteString(master, "sandbox\r")
	res := <-done
	out := <-read
	for _, want := range []string{"/dev/pts/", "all-ttys\r\n", "20 90\r\n", "via-dev-tty\r\n", "name? sandbox\r\n", "hi sandbox\r\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
	if res.ExitCode == nil || *res.ExitCode != 4 {
		t.Errorf("result %+v, want exit 4", res)
	}
}

// A sandboxed command blocked reading its stdin pipe is seen waiting for
// input; one sleeping is not.
func TestWaitingForInputInSession(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	sup := runner.NewSupervisor()
	defer sup.Close()
	sup.SetLauncher(s)
	for _, tt := range []struct {
		argv    []string
		waiting bool
	}{
		{[]string{"/bin/cat"}, true},
		{[]string{"/bin/sleep", "30"}, false},
	} {
		r, w, err := os.Pipe()
		must(t, err)
		started := make(chan int, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			sup.Run(context.Background(), runner.Spec{Argv: tt.argv, Dir: l.root, Stdin: r, Timeout: 30 * time.Second,
				Started: func(pid int) { started <- pid }})
		}()
		pgid := <-started
		r.Close()
		seen := false
		for end := time.Now().Add(2 * time.Second); time.Now().Before(end) && !seen; time.Sleep(10 * time.Millisecond) {
			seen = runner.WaitingForInput(pgid, w)
		}
		if seen != tt.waiting {
			t.Errorf("%s: waiting for input %v, want %v", tt.argv, seen, tt.waiting)
		}
		w.Close()
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
}
