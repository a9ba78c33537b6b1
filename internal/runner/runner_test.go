//go:build unix

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/runner/ordertest"
)

// syncBuffer is a bytes.Buffer safe for the concurrent writes and reads of a test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type counter struct{ n atomic.Int64 }

func (c *counter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }

func bash(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	return path
}

// newSupervisor returns a Supervisor closed at the end of the test.
func newSupervisor(t testing.TB) *Supervisor {
	s := NewSupervisor()
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// runScript runs script in bash and returns the result and both outputs.
func runScript(t testing.TB, s *Supervisor, script string, spec Spec) (Result, string, string) {
	t.Helper()
	var stdout, stderr syncBuffer
	spec.Argv = []string{bash(t), "--noprofile", "--norc", "-c", script}
	spec.Stdout, spec.Stderr = &stdout, &stderr
	if spec.Timeout == 0 {
		spec.Timeout = 30 * time.Second // a hang fails the test as TimedOut, not by hanging
	}
	res, err := s.Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run(%q): %v", script, err)
	}
	return res, stdout.String(), stderr.String()
}

func intp(i int) *int { return &i }

func describe(code *int) string {
	if code == nil {
		return "nil"
	}
	return strconv.Itoa(*code)
}

func TestExitStatus(t *testing.T) {
	lane.Live(t)
	s := newSupervisor(t)
	tests := []struct {
		script string
		code   *int
		signal string
	}{
		{"true", intp(0), ""},
		{"false", intp(1), ""},
		{"exit 3", intp(3), ""},
		{"exit 255", intp(255), ""},
		{"no-such-command-xyz", intp(127), ""},
		{"kill -9 $$", nil, "SIGKILL"},
		{"kill -TERM $$", nil, "SIGTERM"},
		{"kill -INT $$", nil, "SIGINT"},
		{"sh -c 'kill -9 $$'; exit $?", intp(137), ""}, // a child's death is an exit code of the shell
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			res, _, _ := runScript(t, s, tt.script, Spec{})
			if describe(res.ExitCode) != describe(tt.code) || res.Signal != tt.signal {
				t.Errorf("exit %s signal %q, want exit %s signal %q", describe(res.ExitCode), res.Signal, describe(tt.code), tt.signal)
			}
			if res.TimedOut || res.Cancelled || res.PID <= 0 {
				t.Errorf("result %+v", res)
			}
		})
	}
}

func TestOutputStreams(t *testing.T) {
	s := newSupervisor(t)
	res, stdout, stderr := runScript(t, s, `printf 'to out'; printf 'to err' >&2; printf '\n' >&1`, Spec{})
	if stdout != "to out\n" || stderr != "to err" || *res.ExitCode != 0 {
		t.Errorf("stdout %q stderr %q exit %s", stdout, stderr, describe(res.ExitCode))
	}

	// Exact byte counts, both streams busy at once, more than any pipe holds.
	var out, errs counter
	res, err := s.Run(context.Background(), Spec{
		Argv:   []string{bash(t), "-c", "head -c 3000001 /dev/zero & head -c 2000003 /dev/urandom >&2; wait"},
		Stdout: &out, Stderr: &errs,
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.n.Load() != 3000001 || errs.n.Load() != 2000003 || *res.ExitCode != 0 {
		t.Errorf("got %d stdout and %d stderr bytes, exit %s; want 3000001 and 2000003, exit 0",
			out.n.Load(), errs.n.Load(), describe(res.ExitCode))
	}
}

func TestNilWritersDiscard(t *testing.T) {
	s := newSupervisor(t)
	res, err := s.Run(context.Background(), Spec{Argv: []string{bash(t), "-c", "head -c 1000000 /dev/zero; echo x >&2; exit 4"}})
	if err != nil || res.ExitCode == nil || *res.ExitCode != 4 {
		t.Errorf("res %+v err %v, want exit 4", res, err)
	}
}

type failingWriter struct{ calls atomic.Int64 }

func (f *failingWriter) Write([]byte) (int, error) {
	f.calls.Add(1)
	return 0, errors.New("disk full")
}

// A writer that fails must not leave the command blocked on a full pipe.
func TestFailingWriterDoesNotBlock(t *testing.T) {
	s := newSupervisor(t)
	w := &failingWriter{}
	res, err := s.Run(context.Background(), Spec{
		Argv: []string{bash(t), "-c", "head -c 10000000 /dev/zero; echo done >&2"}, Stdout: w,
		Timeout: 30 * time.Second,
	})
	if err != nil || res.TimedOut || *res.ExitCode != 0 {
		t.Errorf("res %+v err %v", res, err)
	}
	if w.calls.Load() != 1 {
		t.Errorf("writer called %d times after failing, want 1", w.calls.Load())
	}
}

func TestStdinClosed(t *testing.T) {
	lane.Live(t)
	s := newSupervisor(t)
	res, stdout, _ := runScript(t, s, `read x; echo "read=$? x=[$x]"; cat; echo "cat=$?"`, Spec{})
	if stdout != "read=1 x=[]\ncat=0\n" || res.TimedOut {
		t.Errorf("stdout %q timed out %v", stdout, res.TimedOut)
	}
	if _, err := exec.LookPath("python3"); err == nil {
		res, _, stderr := runScript(t, s, `python3 -c 'input()'`, Spec{})
		if res.TimedOut || *res.ExitCode != 1 || !strings.Contains(stderr, "EOFError") {
			t.Errorf("python input(): %+v stderr %q", res, stderr)
		}
	}
}

func TestNoControllingTerminal(t *testing.T) {
	s := newSupervisor(t)
	res, stdout, stderr := runScript(t, s, `: </dev/tty; echo "rc=$?"; echo "sid=$(ps -o sid= $$) pid=$$"`, Spec{})
	if !strings.HasPrefix(stdout, "rc=1\n") || !strings.Contains(stderr, "No such device or address") {
		t.Errorf("opening /dev/tty: stdout %q stderr %q", stdout, stderr)
	}
	// The shell leads its own session (and so its own process group).
	var sid, pid int
	fmt.Sscanf(strings.Join(strings.Fields(strings.SplitN(stdout, "\n", 2)[1]), " "), "sid=%d pid=%d", &sid, &pid)
	if pid != res.PID || sid != res.PID {
		t.Errorf("shell pid %d sid %d, want both %d (%q)", pid, sid, res.PID, stdout)
	}
}

func TestDirAndEnv(t *testing.T) {
	s := newSupervisor(t)
	dir := t.TempDir()
	res, stdout, _ := runScript(t, s, `pwd; echo "$ONLY"; echo "${HOME-unset}"; echo "$SHELLGATE_RUN"`,
		Spec{Dir: dir, Env: []string{"ONLY=yes", "PATH=" + os.Getenv("PATH")}})
	lines := strings.Split(stdout, "\n")
	real, _ := filepath.EvalSymlinks(dir)
	if len(lines) < 4 || (lines[0] != dir && lines[0] != real) || lines[1] != "yes" || lines[2] != "unset" ||
		!strings.HasPrefix(lines[3], s.id+".") || *res.ExitCode != 0 {
		t.Errorf("stdout %q", stdout)
	}

	t.Setenv("RUNNER_TEST_INHERITED", "inherited")
	_, stdout, _ = runScript(t, s, `echo "$RUNNER_TEST_INHERITED"`, Spec{})
	if stdout != "inherited\n" {
		t.Errorf("nil Env: stdout %q, want the parent's environment", stdout)
	}
}

func TestStartErrors(t *testing.T) {
	s := newSupervisor(t)
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("#!/bin/sh\necho hi\n"), 0o644)
	sh := bash(t)
	tests := []struct {
		name string
		spec Spec
		is   error
		says string
	}{
		{"program not in PATH", Spec{Argv: []string{"no-such-program-xyz"}}, fs.ErrNotExist, "no-such-program-xyz"},
		{"missing path", Spec{Argv: []string{"/no/such/program"}}, fs.ErrNotExist, "/no/such/program"},
		{"not executable", Spec{Argv: []string{plain}}, fs.ErrPermission, "permission denied"},
		{"missing directory", Spec{Argv: []string{sh, "-c", "true"}, Dir: filepath.Join(dir, "gone")}, fs.ErrNotExist, "working directory"},
		{"directory is a file", Spec{Argv: []string{sh, "-c", "true"}, Dir: plain}, nil, "not a directory"},
		{"empty argv", Spec{}, nil, "empty argv"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := s.Run(context.Background(), tt.spec)
			if err == nil {
				t.Fatalf("started: %+v", res)
			}
			var se *StartError
			if !errors.As(err, &se) {
				t.Errorf("err %T %v, want *StartError", err, err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err %v, want errors.Is %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("err %q does not say %q", err, tt.says)
			}
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if res, err := s.Run(ctx, Spec{Argv: []string{sh, "-c", "true"}}); !errors.Is(err, context.Canceled) || !res.Cancelled {
		t.Errorf("cancelled before start: %+v %v", res, err)
	}

	closed := NewSupervisor()
	closed.Close()
	if _, err := closed.Run(context.Background(), Spec{Argv: []string{sh, "-c", "true"}}); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: err %v, want ErrClosed", err)
	}
}

func TestConcurrentRuns(t *testing.T) {
	lane.Live(t)
	s := newSupervisor(t)
	sh := bash(t)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			var out syncBuffer
			script := fmt.Sprintf("for j in 1 2 3; do echo %d-$j; done; sleep 0.0%d; exit %d", i, i, i)
			res, err := s.Run(context.Background(), Spec{Argv: []string{sh, "-c", script}, Stdout: &out, Timeout: 30 * time.Second})
			want := fmt.Sprintf("%d-1\n%d-2\n%d-3\n", i, i, i)
			if err != nil || res.ExitCode == nil || *res.ExitCode != i || out.String() != want {
				t.Errorf("run %d: %+v %v %q", i, res, err, out.String())
			}
		})
	}
	wg.Wait()
}

// After the shell exits, output written by a background process that still holds
// the pipe reaches the writer only during Drain, and never after Run returns.
func TestDrainStopsAtDeadline(t *testing.T) {
	lane.Live(t)
	s := newSupervisor(t)
	// The background process says on a FIFO when it has written "late" (SIGPIPE
	// ignored, in case the pipe is closed by then): the test waits for that, not
	// for a guess at how long it takes.
	wrote := filepath.Join(t.TempDir(), "wrote-late")
	if err := syscall.Mkfifo(wrote, 0o600); err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	res, err := s.Run(context.Background(), Spec{
		Argv:   []string{bash(t), "-c", `(trap '' PIPE; sleep 0.05; echo soon; sleep 1; echo late; echo done >"$1") 2>/dev/null & echo now`, "bash", wrote},
		Stdout: &out, Drain: 500 * time.Millisecond, Timeout: 30 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "now\nsoon\n" {
		t.Errorf("stdout at return %q, want %q", got, "now\nsoon\n")
	}
	if len(res.BackgroundPIDs) == 0 {
		t.Errorf("no background PIDs reported: %+v", res)
	}
	done := make(chan error, 1)
	go func() { _, err := os.ReadFile(wrote); done <- err }() // returns when the writer closes it
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		if f, err := os.OpenFile(wrote, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close() // let the reader go
		}
		t.Fatal("the background process never wrote \"late\"")
	}
	if got := out.String(); got != "now\nsoon\n" {
		t.Errorf("writer touched after Run returned: %q", got)
	}
}

// Drain is a quiet spell counted from the last output, not from the shell's
// exit: a background job that printed nothing while the shell ran for longer
// than Drain does not hold the call up (what it prints later is not captured),
// and one that prints soon after the shell's last line is still heard.
func TestDrainCountsFromLastOutput(t *testing.T) {
	lane.Live(t)
	for _, tc := range []struct{ name, script, want string }{
		{"quiet job", `setsid sh -c 'sleep 2; echo late' & sleep 1.5`, ""},
		{"job soon after output", `echo now; setsid sh -c 'sleep 0.3; echo soon; sleep 30' &`, "now\nsoon\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSupervisor(t)
			var out syncBuffer
			res, err := s.Run(context.Background(), Spec{
				Argv:   []string{bash(t), "-c", tc.script},
				Stdout: &out, Drain: time.Second, Timeout: 30 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != tc.want {
				t.Errorf("stdout at return %q, want %q (took %v)", got, tc.want, res.Duration)
			}
			if len(res.BackgroundPIDs) == 0 {
				t.Errorf("no background PIDs reported: %+v", res)
			}
		})
	}
}

// Output of a command whose process group is empty at exit is read to the end,
// even though the writer is slow.
func TestSlowWriterGetsEverything(t *testing.T) {
	lane.Live(t)
	s := newSupervisor(t)
	w := &slowCounter{delay: 20 * time.Millisecond}
	res, err := s.Run(context.Background(), Spec{
		Argv:   []string{bash(t), "-c", "head -c 3000000 /dev/zero"},
		Stdout: w, Drain: 10 * time.Millisecond,
	})
	if err != nil || *res.ExitCode != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if w.n.Load() != 3000000 {
		t.Errorf("got %d bytes, want 3000000", w.n.Load())
	}
}

type slowCounter struct {
	counter
	delay time.Duration
}

func (s *slowCounter) Write(p []byte) (int, error) {
	time.Sleep(s.delay)
	return s.counter.Write(p)
}

var _ io.Writer = (*slowCounter)(nil)

// Every Supervisor has an id of its own, which starts its commands' markers:
// a Close must not mistake another supervisor's processes for its own.
func TestSupervisorIDsDiffer(t *testing.T) {
	seen := map[string]bool{}
	for range 10000 {
		id := NewSupervisor().id
		if len(id) != 16 || strings.Trim(id, "0123456789abcdef") != "" {
			t.Fatalf("id %q: want 16 hex digits", id)
		}
		if seen[id] {
			t.Fatalf("id %q given twice", id)
		}
		seen[id] = true
	}
}

// TestDataInHandAtExit: a pump that got the command's last output but has
// not yet noted so (its goroutine descheduled between the Read and the
// bookkeeping, as on a loaded machine) looks like a pump waiting on an empty
// pipe; the output it holds still reaches the writer before Run returns.
func TestDataInHandAtExit(t *testing.T) {
	lane.Live(t)
	hold := func(n int) {
		if n > 0 {
			time.Sleep(300 * time.Millisecond)
		}
	}
	afterRead.Store(&hold)
	defer afterRead.Store(nil)
	s := newSupervisor(t)
	res, stdout, _ := runScript(t, s, "seq 1 3", Spec{})
	if res.ExitCode == nil || *res.ExitCode != 0 || stdout != "1\n2\n3\n" {
		t.Errorf("exit %s, stdout %q, want the whole output", describe(res.ExitCode), stdout)
	}
}

// TestLastOutputBeforeBackgroundJob: a command that ends leaving a job that
// holds the pipes gets the drain's short window for what the job prints
// later, but what the shell itself wrote before it exited is read whole,
// however slow the pump: here each read waits 30 ms, far past the window,
// with up to 64 KB of the shell's 70 KB still in the pipe at its exit.
func TestLastOutputBeforeBackgroundJob(t *testing.T) {
	lastOutputBeforeJob(t, "sleep 30 &")
}

// TestLastOutputBeforeEscapedJob: as TestLastOutputBeforeBackgroundJob, with
// a job that left the command's group (setsid), so the group is empty when
// the shell exits and collect asks no pump where its pipe stands: what the
// shell wrote is still read whole, however slow the pump.
func TestLastOutputBeforeEscapedJob(t *testing.T) {
	lastOutputBeforeJob(t, "setsid sleep 30 &")
}

// lastOutputBeforeJob runs job, then 70 KB of the shell's own output read
// 30 ms a read, and wants that output whole.
func lastOutputBeforeJob(t *testing.T, job string) {
	lane.Live(t)
	slow := func(n int) {
		if n > 0 {
			time.Sleep(30 * time.Millisecond)
		}
	}
	s := newSupervisor(t)
	afterRead.Store(&slow)
	defer afterRead.Store(nil)
	res, stdout, _ := runScript(t, s, job+` for i in $(seq 100000 109999); do echo $i; done`, Spec{})
	if len(res.BackgroundPIDs) == 0 {
		t.Errorf("no background PIDs: %+v", res)
	}
	var want strings.Builder
	for i := 100000; i <= 109999; i++ {
		fmt.Fprintln(&want, i)
	}
	if stdout != want.String() {
		first, last, _ := strings.Cut(stdout, "\n")
		t.Errorf("stdout: %d bytes of the shell's %d (first line %q, last %q)", len(stdout), want.Len(), first, last[max(0, len(last)-14):])
	}
}

// Given one file for both streams (an agent's 2>&1, a terminal), the command
// writes both into one pipe, so they arrive in the order it wrote them, as
// they would without shellgate between (two pipes, each pumped on its own,
// let "end" overtake an error printed before it).
func TestOneFileForBothStreamsKeepsTheOrder(t *testing.T) {
	lane.Live(t)
	s := newSupervisor(t)
	dir := t.TempDir()
	var want strings.Builder
	for i := range 40 {
		fmt.Fprintf(&want, "err %d\nout %d\n", i, i)
	}
	for round := range 10 {
		f, err := os.Create(filepath.Join(dir, fmt.Sprint(round)))
		if err != nil {
			t.Fatal(err)
		}
		out, err := os.OpenFile(f.Name(), os.O_WRONLY|os.O_APPEND, 0) // another open file of it, as 2>&1 is not
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Run(context.Background(), Spec{
			Argv:    []string{bash(t), "--noprofile", "--norc", "-c", `for i in $(seq 0 39); do echo "err $i" >&2; echo "out $i"; done`},
			Stdout:  out,
			Stderr:  f,
			Timeout: 30 * time.Second,
		})
		out.Close()
		f.Close()
		if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
			t.Fatalf("run: %v, %+v", err, res)
		}
		if got, _ := os.ReadFile(f.Name()); string(got) != want.String() {
			t.Fatalf("round %d: the streams arrived out of order:\n%s", round, got)
		}
	}
}

// Given its caller's own pipes (PassStdout, PassStderr), the command writes
// into them itself: a reader of both sees each line in the order the command
// wrote it, as without shellgate between, even as two pipes (two pumps,
// each copying on its own, let stdout overtake stderr).
func TestPassedPipesKeepTheOrder(t *testing.T) {
	lane.Live(t)
	s := newSupervisor(t)
	for round := range 5 {
		outR, outW := pipe(t)
		errR, errW := pipe(t)
		checked := make(chan error, 1)
		go func() { checked <- ordertest.Check(outR, errR) }()
		res, err := s.Run(context.Background(), Spec{
			Argv:       []string{bash(t), "--noprofile", "--norc", "-c", ordertest.Script},
			Stdout:     outW,
			Stderr:     errW,
			PassStdout: true,
			PassStderr: true,
			Timeout:    30 * time.Second,
		})
		if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
			t.Fatalf("run: %v, %+v", err, res)
		}
		outW.Close()
		errW.Close()
		if err := <-checked; err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
}

// A background job holding a passed pipe does not hold up Run, which
// neither reads nor closes the caller's files; Close ends the job, and the
// reader sees EOF.
func TestPassedPipeHeldByABackgroundJob(t *testing.T) {
	lane.Live(t)
	s := NewSupervisor()
	defer s.Close()
	outR, outW := pipe(t)
	read := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(outR)
		read <- string(b)
	}()
	start := time.Now()
	res, err := s.Run(context.Background(), Spec{
		Argv:       []string{bash(t), "--noprofile", "--norc", "-c", "sleep 60 & echo hi"},
		Stdout:     outW,
		PassStdout: true,
		Timeout:    30 * time.Second,
	})
	if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("run: %v, %+v", err, res)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run took %s: it waited for the job", d)
	}
	if len(res.BackgroundPIDs) == 0 {
		t.Errorf("no background PIDs: %+v", res)
	}
	if _, err := outW.WriteString("after\n"); err != nil {
		t.Errorf("the caller's file after Run: %v", err)
	}
	outW.Close()
	select {
	case got := <-read:
		t.Fatalf("EOF while the job runs: %q", got)
	case <-time.After(100 * time.Millisecond):
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-read:
		if got != "hi\nafter\n" {
			t.Errorf("read %q, want hi and after", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no EOF after Close: the job still holds the pipe")
	}
}

func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}
