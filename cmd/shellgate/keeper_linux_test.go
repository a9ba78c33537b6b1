package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/keeper"
	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/runner"
)

// keeperLab is a project and the environment of shellgate processes run in
// it: a store of its own, and a user configuration setting keeper_idle.
type keeperLab struct {
	t          *testing.T
	bin        string
	lab, root  string
	store      string
	configHome string
}

func newKeeperLab(t *testing.T, bin, lab, name, keeperIdle string) *keeperLab {
	t.Helper()
	k := &keeperLab{t: t, bin: bin, lab: lab, root: filepath.Join(lab, name), store: filepath.Join(lab, "s-"+name),
		configHome: filepath.Join(lab, "config-"+name)}
	k.setIdle(keeperIdle)
	for _, d := range []string{"home", "tmp"} {
		os.MkdirAll(filepath.Join(lab, d), 0o700)
	}
	t.Cleanup(func() { k.stopKeepers() })
	return k
}

func (k *keeperLab) setIdle(idle string) {
	cfg := filepath.Join(k.configHome, "shellgate", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	if err := os.WriteFile(cfg, []byte("[checkpoints]\nkeeper_idle = "+strconv.Quote(idle)+"\n"), 0o644); err != nil {
		k.t.Fatal(err)
	}
}

func (k *keeperLab) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, shellgate.CheckpointsEnv+"=") {
			env = append(env, kv)
		}
	}
	return append(env, shellgate.CheckpointsEnv+"="+k.store, "XDG_CONFIG_HOME="+k.configHome,
		"HOME="+filepath.Join(k.lab, "home"), "TMPDIR="+filepath.Join(k.lab, "tmp"))
}

// shellgate runs the binary with args, in the lab's environment.
func (k *keeperLab) shellgate(args ...string) (int, string, string) {
	k.t.Helper()
	cmd := exec.Command(k.bin, args...)
	cmd.Env = k.env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		k.t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

func (k *keeperLab) run(command string, extra ...string) {
	k.t.Helper()
	args := append([]string{"run", "--root", k.root, "--sandbox", "off"}, extra...)
	if code, _, stderr := k.shellgate(append(args, "--", command)...); code != 0 {
		k.t.Fatalf("run %q: %d %s", command, code, stderr)
	}
}

func (k *keeperLab) options() checkpoint.Options {
	return checkpoint.Options{Root: k.root, Dir: k.store}
}

func (k *keeperLab) socket() string {
	s, err := keeper.Socket(k.options())
	if err != nil {
		k.t.Fatal(err)
	}
	return s
}

// keepers are the pids of the keepers of this lab's store (any binary).
func (k *keeperLab) keepers() []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(b, []byte("\x00"+keeperCommand+"\x00")) || !bytes.Contains(b, []byte(strconv.Quote(k.store))) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if st, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat")); err == nil && bytes.Contains(st, []byte(") Z ")) {
			continue // a zombie its parent (another test's process) has yet to reap
		}
		pids = append(pids, pid)
	}
	return pids
}

// waitKeeper waits for the lab's one keeper to listen, and returns its pid.
func (k *keeperLab) waitKeeper() int {
	k.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if pids := k.keepers(); len(pids) == 1 {
			if _, err := os.Stat(k.socket()); err == nil {
				return pids[0]
			}
		}
	}
	k.t.Fatalf("no keeper listens on %s: %v", k.socket(), k.keepers())
	return 0
}

// waitGone waits for pid to end (the keeper ends by itself, or the test fails).
func (k *keeperLab) waitGone(pid int, why string) {
	k.t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !alive(pid) {
			return
		}
	}
	k.t.Fatalf("the keeper %d is still running after %s", pid, why)
}

func alive(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !bytes.Contains(st, []byte(") Z "))
}

// stopKeepers ends what a failed test left, and checks nothing is left.
func (k *keeperLab) stopKeepers() {
	for _, pid := range k.keepers() {
		syscall.Kill(pid, syscall.SIGKILL)
		k.waitGone(pid, "SIGKILL")
	}
}

// changes is `shellgate changes --json` without the times: the commands and
// what each changed.
func (k *keeperLab) changes() string {
	k.t.Helper()
	code, stdout, stderr := k.shellgate("changes", "--root", k.root, "--json")
	var recs []changeRecord
	if code != 0 || json.Unmarshal([]byte(stdout), &recs) != nil {
		k.t.Fatalf("changes: %d %s %s", code, stdout, stderr)
	}
	var b strings.Builder
	for _, r := range recs {
		// Not the checkpoints' ids: the copies' .git/index hold their own
		// files' times.
		fmt.Fprintf(&b, "%d %s: %+v\n", r.ID, r.Command, r.Changes)
	}
	return b.String()
}

// TestCheckpointKeeper: one-shot runs through a root's keeper record the same
// checkpoints and changes as runs that take them in-process, undo restores
// byte for byte, and a keeper killed between or during runs, stalled, of
// another build, idle, or whose root or binary went, costs nothing but time:
// the runs checkpoint in-process, and the keeper is gone.
func TestCheckpointKeeper(t *testing.T) {
	lane.Live(t)
	bin := buildBinary(t)
	lab, _ := checkpointtest.Project(t)
	// Two copies of one project: with the keeper, and without.
	checkpointtest.Sh(t, lab, "cp -a project kept && mv project alone")
	kept := newKeeperLab(t, bin, lab, "kept", "5m")
	alone := newKeeperLab(t, bin, lab, "alone", "0")
	want := checkpointtest.State(t, kept.root)

	both := func(command string) {
		t.Helper()
		kept.run(command)
		alone.run(command)
	}
	both("echo one > one.txt")
	pid := kept.waitKeeper()
	both("rm -rf src && git reset --hard && chmod 700 run.sh")
	both("echo two >> README.md && git add -A && GIT_AUTHOR_DATE=2020-01-01T00:00:00Z GIT_COMMITTER_DATE=2020-01-01T00:00:00Z git -c user.name=t -c user.email=t@t commit -qm two")
	if kept.keepers()[0] != pid {
		t.Fatalf("keeper %d replaced: %v", pid, kept.keepers())
	}
	// Killed during a command (between its two checkpoints): the checkpoint
	// after it is taken in-process.
	both(fmt.Sprintf("kill -9 %d; echo three > one.txt", pid))
	kept.waitGone(pid, "kill -9")
	// Gone between runs: the next run starts another.
	both("rm one.txt")
	pid = kept.waitKeeper()
	// Stalled: the run waits a bounded time, kills it, and checkpoints
	// in-process.
	syscall.Kill(pid, syscall.SIGSTOP)
	both("echo four > four.txt")
	kept.waitGone(pid, "stalling a run")
	both("touch t.txt")
	pid = kept.waitKeeper()
	both("mkdir -p deep/er && echo five > deep/er/five.txt && ln -s five.txt deep/er/link")

	if got, alone := kept.changes(), alone.changes(); got != alone {
		t.Errorf("through the keeper:\n%s\nin-process:\n%s", got, alone)
	}
	if code, _, stderr := kept.shellgate("undo", "--root", kept.root, "--yes", "1"); code != 0 {
		t.Fatalf("undo 1: %d %s", code, stderr)
	}
	if got := checkpointtest.State(t, kept.root); got != want {
		t.Errorf("after undo 1:\n%s", checkpointtest.DiffLines(want, got))
	}
	if pids := alone.keepers(); len(pids) != 0 {
		t.Errorf("keeper_idle = \"0\" started a keeper: %v", pids)
	}

	// doctor says it runs.
	if _, stdout, _ := kept.shellgate("doctor", "--root", kept.root, "--sandbox", "off"); !strings.Contains(stdout, fmt.Sprintf("a keeper (pid %d)", pid)) {
		t.Errorf("doctor does not name keeper %d:\n%s", pid, stdout)
	}
	// Another build (this test's binary) is refused, and the keeper quits.
	if c, err := keeper.Dial(kept.options()); err != nil {
		t.Errorf("dialling the keeper: %v", err)
	} else if _, err := c.Snapshot("test", "another build", ""); err == nil || !strings.Contains(err.Error(), "another build") {
		t.Errorf("a client of another build: %v", err)
		c.Close()
	} else {
		c.Close()
	}
	kept.waitGone(pid, "a client of another build")
	if _, err := os.Stat(kept.socket()); err == nil {
		t.Errorf("the socket is left: %s", kept.socket())
	}

	// SIGTERM.
	kept.run("touch t.txt")
	pid = kept.waitKeeper()
	syscall.Kill(pid, syscall.SIGTERM)
	kept.waitGone(pid, "SIGTERM")

	// Its idle time.
	kept.setIdle("1s")
	kept.run("touch t.txt")
	kept.waitGone(kept.waitKeeper(), "its idle time")
	// Its idle time, the run that started it killed by SIGKILL while its
	// command ran: the keeper outlives the run by design, and still ends on
	// its own (the sandbox corpus's kill9 rows wait for the run's other
	// processes, not for it).
	killed := exec.Command(kept.bin, "run", "--root", kept.root, "--sandbox", "off", "--", "echo x > k.txt; sleep 30")
	killed.Env = kept.env()
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	pid = kept.waitKeeper()
	left, _ := runner.Descendants(killed.Process.Pid)
	killed.Process.Kill()
	killed.Wait()
	for _, p := range left {
		if p != pid {
			syscall.Kill(p, syscall.SIGKILL) // the sleep, if the run left it
		}
	}
	kept.waitGone(pid, "its idle time, its run killed")

	// Its binary replaced.
	kept.setIdle("5m")
	kept.bin = filepath.Join(lab, "shellgate")
	checkpointtest.Sh(t, lab, "cp "+bin+" shellgate")
	kept.run("touch t.txt")
	pid = kept.waitKeeper()
	checkpointtest.Sh(t, lab, "cp "+bin+" shellgate.new && mv shellgate.new shellgate")
	kept.waitGone(pid, "its binary was replaced")

	// Its store removed.
	kept.run("touch t.txt")
	pid = kept.waitKeeper()
	os.RemoveAll(filepath.Dir(kept.socket()))
	kept.waitGone(pid, "its store was removed")

	// Its root removed.
	kept.run("touch t.txt")
	pid = kept.waitKeeper()
	os.RemoveAll(kept.root)
	kept.waitGone(pid, "its root was removed")
}

// TestCheckpointKeeperUnreachableFromSandbox: a command run through the
// default sandbox cannot connect to the keeper's socket.
func TestCheckpointKeeperUnreachableFromSandbox(t *testing.T) {
	lane.Live(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	bin := buildBinary(t)
	lab, _ := checkpointtest.Project(t)
	k := newKeeperLab(t, bin, lab, "project", "5m")
	k.run("touch t.txt")
	pid := k.waitKeeper()
	sock := k.socket()
	probe := `python3 -c 'import socket,sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1]); print("connected")
except OSError as e:
    print("refused", e.errno)' ` + sock
	code, stdout, stderr := k.shellgate("run", "--root", k.root, "--json", "--", probe)
	var env envelope.Envelope
	if err := json.Unmarshal([]byte(stdout), &env); err != nil || code != 0 || !strings.HasPrefix(env.Data.Stdout, "refused ") {
		t.Errorf("a sandboxed command reached the keeper's socket %s: %d %v\n%s%s", sock, code, err, stdout, stderr)
	}
	// The keeper still serves.
	k.run("echo after > after.txt")
	if got := k.keepers(); len(got) != 1 || got[0] != pid {
		t.Errorf("keeper %d after the probe: %v", pid, got)
	}
	syscall.Kill(pid, syscall.SIGTERM)
	k.waitGone(pid, "SIGTERM")
}
