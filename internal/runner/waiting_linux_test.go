package runner

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
	"golang.org/x/sys/unix"
)

// pipeRun is a command whose stdin is a pipe we hold the write end of.
type pipeRun struct {
	stdin  *os.File // our end
	output *syncBuffer
	pid    chan int
	result chan Result
}

func startOnPipe(t *testing.T, s *Supervisor, argv ...string) *pipeRun {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &pipeRun{stdin: w, output: new(syncBuffer), pid: make(chan int, 1), result: make(chan Result, 1)}
	spec := Spec{Argv: argv, Stdin: r, Stdout: p.output, Stderr: p.output, Timeout: 60 * time.Second,
		Started: func(pid int) { p.pid <- pid }}
	go func() {
		res, err := s.Run(context.Background(), spec)
		r.Close()
		if err != nil {
			t.Errorf("Run(%q): %v", argv, err)
			close(p.pid)
		}
		p.result <- res
	}()
	t.Cleanup(func() { w.Close() })
	return p
}

func startedPID(t *testing.T, c chan int) int {
	t.Helper()
	select {
	case pid, ok := <-c:
		if !ok {
			t.Fatal("not started")
		}
		return pid
	case <-time.After(20 * time.Second):
		t.Fatal("not started within 20s")
		return 0
	}
}

// eventually polls the detector until it reports waiting.
func eventually(t *testing.T, what string, pgid int, input *os.File) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !WaitingForInput(pgid, input) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not seen waiting for input within 20s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// never polls the detector for a while and fails if it ever reports waiting.
func never(t *testing.T, what string, pgid int, input *os.File) {
	t.Helper()
	for end := time.Now().Add(600 * time.Millisecond); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if WaitingForInput(pgid, input) {
			t.Fatalf("%s: reported waiting for input", what)
		}
	}
}

func waitFor(t *testing.T, what string, out *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: output never contained %q: %q", what, want, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func needProgram(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skip(name, "not installed")
	}
	return p
}

// Commands reading their stdin pipe are waiting for input; answering them lets
// them finish.
func TestWaitingForInputPipe(t *testing.T) {
	s := newSupervisor(t)
	sh := bash(t)
	py := needProgram(t, "python3")
	tests := []struct {
		name   string
		argv   []string
		answer string
		want   string // output once answered
	}{
		{"bash read -p", []string{sh, "--noprofile", "--norc", "-c", `read -p 'name? ' x; echo "hi $x"`}, "bob\n", "hi bob"},
		{"python input", []string{py, "-c", `print("got", input("? "))`}, "42\n", "got 42"},
		{"cat", []string{"cat"}, "meow\n", "meow"},
		{"head -n1", []string{"head", "-n1"}, "first\nsecond\n", "first"},
		{"in a pipeline", []string{sh, "--noprofile", "--norc", "-c", `echo start; tr a-z A-Z | cat`}, "loud\n", "LOUD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := startOnPipe(t, s, tt.argv...)
			pgid := startedPID(t, p.pid)
			eventually(t, tt.name, pgid, p.stdin)
			io.WriteString(p.stdin, tt.answer)
			p.stdin.Close() // cat and tr go on until EOF
			res := <-p.result
			if res.ExitCode == nil || *res.ExitCode != 0 || !strings.Contains(p.output.String(), tt.want) {
				t.Errorf("after the answer: %+v, output %q, want %q", res, p.output.String(), tt.want)
			}
		})
	}
}

// Commands busy with something else, or waiting on another file, are not.
func TestNotWaitingForInputPipe(t *testing.T) {
	lane.Live(t)
	s := newSupervisor(t)
	sh := bash(t)
	py := needProgram(t, "python3")
	tests := []struct {
		name  string
		argv  []string
		ready string // output once in the state to test
	}{
		{"sleep", []string{sh, "--noprofile", "--norc", "-c", "echo ready; exec sleep 30"}, "ready"},
		{"a server polling its socket", []string{py, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1"}, "Serving HTTP"},
		{"reading another pipe", []string{sh, "--noprofile", "--norc", "-c", `exec 3< <(sleep 30); echo ready; read -u 3 x`}, "ready"},
		{"busy loop", []string{sh, "--noprofile", "--norc", "-c", "echo ready; while :; do :; done"}, "ready"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := startOnPipe(t, s, tt.argv...)
			pgid := startedPID(t, p.pid)
			waitFor(t, tt.name, p.output, tt.ready)
			never(t, tt.name, pgid, p.stdin)
			signalGroup(pgid, 9)
			<-p.result
		})
	}
}

// A reader stopped (SIGSTOP) in its read is not waiting for input: its
// state is looked at, though only once a read on the input is seen.
func TestNotWaitingForInputStopped(t *testing.T) {
	s := newSupervisor(t)
	p := startOnPipe(t, s, "cat")
	pgid := startedPID(t, p.pid)
	eventually(t, "cat", pgid, p.stdin)
	signalGroup(pgid, unix.SIGSTOP)
	never(t, "cat stopped", pgid, p.stdin)
	signalGroup(pgid, unix.SIGCONT)
	eventually(t, "cat again", pgid, p.stdin)
	p.stdin.Close()
	<-p.result
}

// On a terminal, line-editing prompts wait in read or select on it.
func TestWaitingForInputTerminal(t *testing.T) {
	lane.Live(t)
	s := newSupervisor(t)
	sh := bash(t)
	py := needProgram(t, "python3")
	env := []string{"TERM=xterm", "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "PS1=$ "}
	tests := []struct {
		name          string
		argv          []string
		prompt        string
		answer, reply string
	}{
		{"python3 REPL", []string{py, "-q"}, ">>> ", "print(6*7)\r", "\r\n42\r\n"},
		{"bash -i", []string{sh, "--norc", "--noprofile", "-i"}, "$ ", "echo $((6*7))\r", "42\r\n"},
		{"read -p", []string{sh, "--norc", "--noprofile", "-c", `read -p 'name? ' x; echo "hi $x"; read y`}, "name? ", "bob\r", "hi bob"},
		// libuv waits in epoll, on a file of its own opened from the tty's name.
		{"node REPL", []string{"node"}, "> ", "6*7\r", "42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := exec.LookPath(tt.argv[0]); err != nil {
				t.Skip(tt.argv[0], "not installed")
			}
			pid := make(chan int, 1)
			r := startOnTerminal(t, s, Spec{Env: env, Started: func(p int) { pid <- p }}, tt.argv...)
			pgid := startedPID(t, pid)
			r.waitOutput(t, tt.prompt)
			eventually(t, tt.name, pgid, r.master)
			io.WriteString(r.master, tt.answer)
			r.waitOutput(t, tt.reply)
			eventually(t, tt.name+" again", pgid, r.master) // back at the prompt
			signalGroup(pgid, 9)
			r.wait(t)
		})
	}
}

func TestNotWaitingForInputTerminal(t *testing.T) {
	lane.Live(t)
	s := newSupervisor(t)
	needProgram(t, "top")
	pid := make(chan int, 1)
	r := startOnTerminal(t, s, Spec{Env: []string{"TERM=xterm", "PATH=" + os.Getenv("PATH")}, Started: func(p int) { pid <- p }},
		"top", "-b", "-d", "1")
	pgid := startedPID(t, pid)
	r.waitOutput(t, "PID")
	never(t, "top -b", pgid, r.master)
	signalGroup(pgid, 9)
	r.wait(t)
}

func TestWaitingForInputBadArguments(t *testing.T) {
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	for _, pgid := range []int{-1, 0, 1} {
		if WaitingForInput(pgid, w) {
			t.Errorf("WaitingForInput(%d) = true", pgid)
		}
	}
	if WaitingForInput(os.Getpid(), nil) {
		t.Error("WaitingForInput(nil input) = true")
	}
}

func TestParseSyscall(t *testing.T) {
	tests := []struct {
		in   string
		nr   int
		arg0 uint64
		ok   bool
	}{
		{"0 0x3 0x7ffd1 0x1 0x0 0x0 0x0 0x7ffd0 0x7f12\n", 0, 3, true},
		{"running\n", 0, 0, false},
		{"-1 0x7ffd0 0x7f12\n", 0, 0, false},
		{"", 0, 0, false},
		{"7 zz 0 0 0 0 0 0 0", 0, 0, false},
	}
	for _, tt := range tests {
		nr, args, ok := parseSyscall([]byte(tt.in))
		if ok != tt.ok || ok && (nr != tt.nr || args[0] != tt.arg0) {
			t.Errorf("parseSyscall(%q) = %d %v %v", tt.in, nr, args, ok)
		}
	}
}

// An interactive shell runs each command in a process group of its own, in the
// same session: the command is what waits, or not.
func TestWaitingForInputJobControl(t *testing.T) {
	lane.Live(t)
	s := newSupervisor(t)
	pid := make(chan int, 1)
	r := startOnTerminal(t, s, Spec{Env: []string{"TERM=xterm", "PATH=" + os.Getenv("PATH"), "PS1=$ "}, Started: func(p int) { pid <- p }},
		bash(t), "--norc", "--noprofile", "-i")
	pgid := startedPID(t, pid)
	r.waitOutput(t, "$ ")
	eventually(t, "the prompt", pgid, r.master)

	io.WriteString(r.master, "echo sleeping; sleep 30\r")
	r.waitOutput(t, "sleeping\r\n")
	never(t, "sleep under bash -i", pgid, r.master)

	io.WriteString(r.master, "\x03echo catting; cat\r")
	r.waitOutput(t, "catting\r\n")
	eventually(t, "cat under bash -i", pgid, r.master)
	if cat := groupMembers(pgid, nil); len(cat) != 1 {
		t.Errorf("process group %d has %v; want only bash, cat in its own group", pgid, cat)
	}
	signalGroup(pgid, 9)
	r.wait(t)
}

// The detector costs one /proc scan, like listing a group's members (the
// baseline), plus a look at the syscall of the group's sleeping members.
func BenchmarkWaitingForInput(b *testing.B) {
	s := NewSupervisor()
	defer s.Close()
	r, w, _ := os.Pipe()
	defer w.Close()
	pid := make(chan int, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(context.Background(), Spec{Argv: []string{"cat"}, Stdin: r, Started: func(p int) { pid <- p }})
	}()
	pgid := <-pid
	r.Close()
	for !WaitingForInput(pgid, w) {
		time.Sleep(time.Millisecond)
	}
	b.Run("baseline-groupMembers", func(b *testing.B) {
		for b.Loop() {
			groupMembers(pgid, nil)
		}
	})
	b.Run("WaitingForInput", func(b *testing.B) {
		for b.Loop() {
			if !WaitingForInput(pgid, w) {
				b.Fatal("cat not waiting")
			}
		}
	})
	// The common case, polled for every running call: a shell and its child,
	// neither reading its input.
	b.Run("not-waiting", func(b *testing.B) {
		r2, w2, _ := os.Pipe()
		defer w2.Close()
		ctx, cancel := context.WithCancel(context.Background())
		started, ended := make(chan int, 1), make(chan struct{})
		go func() {
			defer close(ended)
			s.Run(ctx, Spec{Argv: []string{"bash", "-c", "sleep 100; echo ok"}, Stdin: r2, Started: func(p int) { started <- p }})
		}()
		pgid := <-started
		r2.Close()
		for len(groupMembers(pgid, nil)) < 2 {
			time.Sleep(time.Millisecond)
		}
		for b.Loop() {
			if WaitingForInput(pgid, w2) {
				b.Fatal("bash -c 'sleep 100' reported waiting")
			}
		}
		cancel()
		<-ended
	})
	w.Close()
	<-done
}
