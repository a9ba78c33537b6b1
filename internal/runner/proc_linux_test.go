package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
)

// alive reports whether pid exists in /proc and is not a zombie.
func alive(pid int) bool {
	st, ok := readStat(pid)
	return ok && !st.dead()
}

// pidsIn parses whitespace-separated PIDs.
func pidsIn(t *testing.T, s string) []int {
	t.Helper()
	var pids []int
	for _, f := range strings.Fields(s) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("not a PID: %q in %q", f, s)
		}
		pids = append(pids, pid)
	}
	return pids
}

// waitFile waits for a file written by a background process and returns its PIDs.
func waitFile(t *testing.T, path string) []int {
	t.Helper()
	for range 500 {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return pidsIn(t, string(b))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never written", path)
	return nil
}

func requireGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("%s: process %d still alive", what, pid)
		}
	}
}

func requireGroupEmpty(t *testing.T, pgid int) {
	t.Helper()
	if m := groupMembers(pgid, nil); len(m) > 0 {
		t.Errorf("process group %d still has %v", pgid, m)
	}
}

func TestTimeoutKillsGroup(t *testing.T) {
	lane.Live(t)
	s := newSupervisor(t)
	tests := []struct {
		name   string
		script string
		signal string
		grace  bool // something ignores SIGTERM: the kill must wait for KillGrace
	}{
		{"plain", `echo before; sleep 100 & echo $! >&2; sleep 100`, "SIGTERM", false},
		{"child traps TERM", `echo before; (trap '' TERM; sleep 100; sleep 100) & echo $! >&2; sleep 100`, "SIGTERM", true},
		{"shell traps TERM", `echo before; trap '' TERM; sleep 100 & echo $! >&2; sleep 100`, "SIGKILL", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			grace := 300 * time.Millisecond
			res, stdout, stderr := runScript(t, s, tt.script, Spec{Timeout: 300 * time.Millisecond, KillGrace: grace})
			if !res.TimedOut || res.Cancelled || res.ExitCode != nil || res.Signal != tt.signal {
				t.Errorf("result %+v, want timed out by %s", res, tt.signal)
			}
			if stdout != "before\n" {
				t.Errorf("stdout %q, want the output from before the kill", stdout)
			}
			if tt.grace && res.Duration < 600*time.Millisecond {
				t.Errorf("took %v: SIGKILL came before the grace period was over", res.Duration)
			}
			requireGroupEmpty(t, res.PID)
			requireGone(t, "background child", pidsIn(t, stderr)...)
			requireGone(t, "shell", res.PID)
			if len(res.BackgroundPIDs) != 0 {
				t.Errorf("background PIDs %v after a kill", res.BackgroundPIDs)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	s := newSupervisor(t)
	ctx, cancel := context.WithCancel(context.Background())
	timer := time.AfterFunc(200*time.Millisecond, cancel)
	defer timer.Stop()
	var out syncBuffer
	res, err := s.Run(ctx, Spec{
		Argv:   []string{bash(t), "-c", "echo started; sleep 100 & sleep 100"},
		Stdout: &out, KillGrace: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || res.TimedOut || res.Signal != "SIGTERM" || out.String() != "started\n" {
		t.Errorf("result %+v stdout %q", res, out.String())
	}
	requireGroupEmpty(t, res.PID)
}

// The case that makes a naive exec.Cmd hang: a background process holds the
// output pipe. Run returns at once, reports the PID, leaves it running, and Close
// kills it.
func TestBackgroundProcess(t *testing.T) {
	s := NewSupervisor()
	defer s.Close()
	var out, errs syncBuffer
	res, err := s.Run(context.Background(), Spec{
		Argv:   []string{bash(t), "-c", "sleep 300 & echo started; echo $! >&2"},
		Stdout: &out, Stderr: &errs, Timeout: 60 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "started\n" {
		t.Fatalf("stdout %q", out.String())
	}
	sleepPID := pidsIn(t, errs.String())[0]
	if res.TimedOut || res.Duration > 30*time.Second { // waiting for it: 60 s, the timeout
		t.Errorf("Run waited for the background process: %+v", res)
	}
	if !slices.Equal(res.BackgroundPIDs, []int{sleepPID}) {
		t.Errorf("BackgroundPIDs %v, want [%d]", res.BackgroundPIDs, sleepPID)
	}
	if !alive(sleepPID) {
		t.Fatalf("background sleep %d was killed at exit; it should keep running", sleepPID)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	requireGone(t, "background sleep after Close", sleepPID)
	requireGroupEmpty(t, res.PID)
}

// A background process that keeps writing after Run returned is not killed by
// SIGPIPE: its output is read and discarded until Close.
func TestBackgroundWriterKeepsRunning(t *testing.T) {
	lane.Live(t)
	s := newSupervisor(t)
	flag := filepath.Join(t.TempDir(), "flag")
	res, stdout, _ := runScript(t, s,
		`(sleep 0.2; for i in $(seq 1000); do echo tick; done; echo $BASHPID > `+flag+`; sleep 300) & echo started`,
		Spec{Drain: 20 * time.Millisecond})
	if stdout != "started\n" || len(res.BackgroundPIDs) == 0 {
		t.Fatalf("stdout %q result %+v", stdout, res)
	}
	pid := waitFile(t, flag)[0]
	if !alive(pid) {
		t.Errorf("background writer %d died after writing to the drained pipe", pid)
	}
}

// A writer left in the process group that never stops printing is read for
// Drain, not until the output goes quiet: the look for the group's members runs
// beside the drain, and what it finds still bounds it.
func TestBusyGroupDrainIsBounded(t *testing.T) {
	s := newSupervisor(t)
	// A drain long enough that the writer, however loaded the machine, does
	// not pause that long: the output never goes quiet.
	res, stdout, _ := runScript(t, s, `(trap '' PIPE; while :; do echo tick; done) 2>/dev/null & echo started`,
		Spec{Drain: 300 * time.Millisecond})
	if !strings.Contains(stdout, "started\n") || len(res.BackgroundPIDs) == 0 {
		t.Fatalf("stdout %.40q… result %+v", stdout, res)
	}
	if res.Duration >= quietLimit {
		t.Errorf("Run took %s: it read a busy group's output until quietLimit (%s), not for Drain", res.Duration, quietLimit)
	}
}

// Descendants that left the process group (setsid) are found by the marker in
// their environment: Close kills them after a normal exit, and a timeout kills them.
func TestEscapedDescendants(t *testing.T) {
	lane.Live(t)
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("no setsid")
	}
	dir := t.TempDir()
	t.Run("Close", func(t *testing.T) {
		s := NewSupervisor()
		defer s.Close()
		file := filepath.Join(dir, "close")
		res, _, _ := runScript(t, s, `setsid -f sh -c 'echo $$ > `+file+`; exec sleep 600'; nohup setsid sh -c 'echo $$ >> `+file+`.2; exec sleep 600' >/dev/null 2>&1 & echo ok`, Spec{})
		if *res.ExitCode != 0 {
			t.Fatalf("%+v", res)
		}
		escaped := append(waitFile(t, file), waitFile(t, file+".2")...)
		for _, pid := range escaped {
			if !alive(pid) {
				t.Fatalf("escaped %d already gone", pid)
			}
			if st, _ := readStat(pid); st.pgrp == res.PID {
				t.Fatalf("process %d did not leave the group", pid)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		requireGone(t, "escaped after Close", escaped...)
	})
	t.Run("reported while holding the pipe", func(t *testing.T) {
		s := newSupervisor(t)
		res, stdout, _ := runScript(t, s, `setsid -f sh -c 'echo $$; exec sleep 600'; sleep 0.1`, Spec{})
		escaped := pidsIn(t, stdout)
		if len(escaped) != 1 || !slices.Equal(res.BackgroundPIDs, escaped) {
			t.Errorf("BackgroundPIDs %v, want the escaped %v", res.BackgroundPIDs, escaped)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		s := newSupervisor(t)
		file := filepath.Join(dir, "timeout")
		// The shell waits until the escaped process is set up, then is killed.
		res, _, _ := runScript(t, s, `setsid -f sh -c 'trap "" TERM; echo $$ > `+file+`; sleep 600; sleep 1'
			while [ ! -s `+file+` ]; do sleep 0.01; done; sleep 100`,
			Spec{Timeout: time.Second, KillGrace: 200 * time.Millisecond})
		if !res.TimedOut {
			t.Fatalf("%+v", res)
		}
		requireGone(t, "escaped after timeout", waitFile(t, file)...)
	})
}

// Close also ends commands still running, and their Run returns.
func TestCloseKillsRunning(t *testing.T) {
	s := NewSupervisor()
	done := make(chan Result)
	started := make(chan struct{})
	go func() {
		res, _ := s.Run(context.Background(), Spec{Argv: []string{bash(t), "-c", "sleep 300; echo never"},
			Started: func(int) { close(started) }})
		done <- res
	}()
	<-started
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.Signal != "SIGTERM" || !res.Cancelled {
		t.Errorf("result %+v, want cancelled by SIGTERM", res)
	}
	requireGroupEmpty(t, res.PID)
}

func TestParseStat(t *testing.T) {
	line := "4242 (a (weird) name) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 100 18446744073709551615"
	st, ok := parseStat([]byte(line))
	if !ok || st.state != 'S' || st.pgrp != 4240 || st.start != 987654 {
		t.Errorf("parseStat = %+v, %v", st, ok)
	}
	for _, bad := range []string{"", "4242 (x", "4242 (x) S 1 2", "4242 (x) S 1 notanumber 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"} {
		if _, ok := parseStat([]byte(bad)); ok {
			t.Errorf("parseStat(%q) ok", bad)
		}
	}
}

// Group numbers 0 and 1 would mean our own group and every process: never used.
func TestSignalGroupRefusesSpecialGroups(t *testing.T) {
	for _, pgid := range []int{-5, 0, 1} {
		if groupExists(pgid) || len(groupMembers(pgid, nil)) > 0 || signalGroup(pgid, 0) == nil {
			t.Errorf("group %d treated as a real group", pgid)
		}
	}
}

// Close ends background processes that ignore SIGTERM, with SIGKILL after its
// KillGrace.
func TestCloseKillsStubbornBackground(t *testing.T) {
	s := NewSupervisor()
	s.KillGrace = 100 * time.Millisecond
	defer s.Close()
	res, stdout, _ := runScript(t, s, `trap '' TERM; sleep 300 >/dev/null & echo $!`, Spec{})
	pid := pidsIn(t, stdout)[0]
	if !slices.Contains(res.BackgroundPIDs, pid) || !alive(pid) {
		t.Fatalf("background %d not reported or not alive: %+v", pid, res)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	requireGone(t, "background ignoring SIGTERM", pid)
}

// lister is a Lister that holds exactly the processes it names.
type lister struct {
	Wrapper
	pids []int
	ok   bool
}

func (l lister) Processes() ([]int, bool) { return l.pids, l.ok }

// The search for marked processes reads only what a Lister lists, and every
// process when it cannot list them (or there is no Launcher).
func TestMarkedProcsReadsWhatAListerLists(t *testing.T) {
	marker := "SHELLGATE_TEST_MARK=" + strconv.Itoa(os.Getpid()) + "." + t.Name()
	cmd := exec.Command("sleep", "30")
	cmd.Env = []string{marker}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	pattern := runPattern(marker)
	for _, c := range []struct {
		name  string
		scope Launcher
		found bool
	}{
		{"no launcher", nil, true},
		{"lists it", lister{pids: []int{pid}, ok: true}, true},
		{"lists others", lister{pids: []int{os.Getpid()}, ok: true}, false},
		{"cannot list", lister{ok: false}, true},
	} {
		var got []int
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			// sleep may not have exec'd yet: its environment is ours until then.
			if got = pidsOf(markedProcs(pattern, c.scope)); len(got) > 0 || !c.found || time.Now().After(deadline) {
				break
			}
		}
		if found := slices.Contains(got, pid); found != c.found {
			t.Errorf("%s: found %v, want the marked process %d found: %v", c.name, got, pid, c.found)
		}
	}
}

// looker is a Launcher that counts the processes the search for marked ones
// asks it about: each is one read of /proc.
type looker struct {
	Wrapper
	asked *atomic.Int64
}

func (l looker) Contains(int) bool { l.asked.Add(1); return true }

// Close looks through /proc for escaped descendants only when the
// supervisor started a command: one that started none (a Gate whose
// commands all ran in its sessions) has nothing to find, and its exit
// does not wait for a pass over every process of the machine.
func TestCloseLooksOnlyAfterACommand(t *testing.T) {
	for _, ran := range []bool{false, true} {
		var asked atomic.Int64
		s := NewSupervisor()
		s.SetLauncher(looker{asked: &asked})
		if ran {
			runScript(t, s, "true", Spec{})
		}
		asked.Store(0)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if looked := asked.Load() > 0; looked != ran {
			t.Errorf("a command started: %v; Close looked at %d processes", ran, asked.Load())
		}
	}
}
