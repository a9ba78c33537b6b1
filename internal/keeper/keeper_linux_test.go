package keeper

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
)

// serveEnv makes this test binary a keeper: its value is the JSON Args.
const serveEnv = "SHELLGATE_TEST_KEEPER"

func TestMain(m *testing.M) {
	if a := os.Getenv(serveEnv); a != "" {
		var args Args
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			panic(err)
		}
		if err := Serve(args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// startTestKeeper runs this binary as the keeper of o and waits until it
// answers; it returns the process, waited for by the caller.
func startTestKeeper(t *testing.T, o checkpoint.Options) *exec.Cmd {
	t.Helper()
	return startKeeperAs(t, os.Args[0], o, time.Hour)
}

// startKeeperAs is startTestKeeper with executable exe (this binary or a
// copy) and idle time idle.
func startKeeperAs(t *testing.T, exe string, o checkpoint.Options, idle time.Duration) *exec.Cmd {
	t.Helper()
	args, _ := json.Marshal(Args{Options: o, Idle: idle})
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), serveEnv+"="+string(args))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) // a no-op after the test waited
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, ok := Running(o); ok {
			if _, err := os.Stat(filepath.Join(mustStoreDir(t, o), SocketName)); err == nil {
				return cmd
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the keeper does not listen")
		}
	}
}

func mustStoreDir(t *testing.T, o checkpoint.Options) string {
	dir, err := checkpoint.StoreDir(o)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestKeeperAnswersAsTheStore: a keeper's checkpoints are the store's (the
// records an in-process Store then reads, the changes it computes), and a
// client of other options is refused and makes it quit.
func TestKeeperAnswersAsTheStore(t *testing.T) {
	lab, root := checkpointtest.Project(t)
	o := checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store")}
	cmd := startTestKeeper(t, o)
	c, err := Dial(o)
	if err != nil {
		t.Fatal(err)
	}
	if c.PID() != cmd.Process.Pid {
		t.Errorf("the keeper's pid %d, its peer credentials say %d", cmd.Process.Pid, c.PID())
	}
	id, err := c.Snapshot("run", "rm README.md", "")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(root, "README.md"))
	sum, err := c.Finish(id)
	c.Close()
	if err != nil || sum.Deleted != 1 || sum.Changes[0] != (checkpoint.Change{Kind: checkpoint.Deleted, Path: "README.md"}) {
		t.Fatalf("finish: %v %+v", err, sum)
	}
	s, err := checkpoint.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Record(id)
	if err != nil || r.Command != "rm README.md" || r.After == "" {
		t.Errorf("record %d as the store has it: %v %+v", id, err, r)
	}
	if got, err := s.Changes(id); err != nil || fmt.Sprint(got) != fmt.Sprint(sum) {
		t.Errorf("the store's changes %+v (%v), the keeper's %+v", got, err, sum)
	}
	if _, ok := Running(o); !ok {
		t.Error("Running: no keeper")
	}

	other := o
	other.MaxCount = 5
	if err := refusal(other); !strings.Contains(err, "other checkpoint options") {
		t.Errorf("a client of other options: %s", err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("the keeper refused a client and then: %v", err)
	}
	if _, ok := Running(o); ok {
		t.Error("Running after the keeper quit")
	}
	if _, err := Dial(o); err == nil {
		t.Error("a keeper answers after it quit")
	}
}

// refusal is why the keeper of o refuses a client (it says so with its first
// answer), or what else went wrong.
func refusal(o checkpoint.Options) string {
	c, err := Dial(o)
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	if _, err := c.Snapshot("test", "refused", ""); err != nil {
		return err.Error()
	}
	return "accepted"
}

// TestKeeperEnds: a keeper sleeps until something happens (no look every
// second), and each thing it ends on wakes it: it exits, its socket gone,
// with an idle time of an hour (but for the idle case), within the minute
// the test waits.
func TestKeeperEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		idle time.Duration
		do   func(t *testing.T, root, store, exe string)
	}{
		{"idle time", 300 * time.Millisecond, func(t *testing.T, root, store, exe string) {}},
		{"root removed", time.Hour, func(t *testing.T, root, store, exe string) { must(t, os.RemoveAll(root)) }},
		{"root renamed", time.Hour, func(t *testing.T, root, store, exe string) { must(t, os.Rename(root, root+"-moved")) }},
		{"store removed", time.Hour, func(t *testing.T, root, store, exe string) {
			// as rm -rf would, while the keeper may still write its first
			// checkpoint's objects in it
			for try := 0; os.RemoveAll(store) != nil; try++ {
				if try == 20 {
					t.Fatal("the store cannot be removed")
				}
				time.Sleep(50 * time.Millisecond)
			}
		}},
		{"store's HEAD removed", time.Hour, func(t *testing.T, root, store, exe string) {
			must(t, os.Remove(filepath.Join(store, "git", "HEAD")))
		}},
		{"socket replaced", time.Hour, func(t *testing.T, root, store, exe string) {
			sock := filepath.Join(store, SocketName)
			must(t, os.Remove(sock))
			must(t, os.WriteFile(sock, nil, 0o600))
		}},
		{"executable replaced", time.Hour, func(t *testing.T, root, store, exe string) {
			copyFile(t, os.Args[0], exe+".new")
			must(t, os.Rename(exe+".new", exe))
		}},
		{"executable touched", time.Hour, func(t *testing.T, root, store, exe string) {
			later := time.Now().Add(time.Minute)
			must(t, os.Chtimes(exe, later, later))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lab, root := checkpointtest.Project(t)
			o := checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store")}
			exe := filepath.Join(lab, "bin", "keeper")
			must(t, os.MkdirAll(filepath.Dir(exe), 0o755))
			copyFile(t, os.Args[0], exe)
			// A copy of this binary, which may be replaced (and which this
			// binary, of another build, cannot ask: the keeper walks the
			// root as it starts, and then waits).
			cmd := startKeeperAs(t, exe, o, tc.idle)
			tc.do(t, root, mustStoreDir(t, o), exe)
			ended := make(chan error, 1)
			go func() { ended <- cmd.Wait() }()
			select {
			case err := <-ended:
				if err != nil {
					t.Errorf("the keeper ended: %v", err)
				}
			case <-time.After(time.Minute):
				t.Fatal("the keeper did not end")
			}
			if _, ok := Running(o); ok {
				t.Error("Running after the keeper ended")
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	must(t, err)
	must(t, os.WriteFile(to, b, 0o755))
}

// TestKeeperAnswersBeforeUpkeep: the keeper answers a checkpoint before
// the store's upkeep — the records past MaxCount are still there when the
// answer to the checkpoint before a command arrives (a keeper that pruned
// in the command's path would have dropped one at every answer) — and does
// the upkeep after its answers: the store is held to MaxCount again soon
// after, and when the keeper ends. An upkeep kicked earlier (the first
// walk's end, a connection's end) may still run beside a later answer, so
// the test asks for the extra record at most answers, not at each.
func TestKeeperAnswersBeforeUpkeep(t *testing.T) {
	lab, root := checkpointtest.Project(t)
	o := checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store"), MaxCount: 2}
	cmd := startTestKeeper(t, o)
	records := func() int {
		_, recs, _, _, err := checkpoint.Look(o)
		if err != nil {
			t.Fatal(err)
		}
		return len(recs)
	}
	const commands = 8
	extra := 0 // answers past MaxCount that found the record upkeep drops
	for i := 1; i <= commands; i++ {
		c, err := Dial(o)
		if err != nil {
			t.Fatal(err)
		}
		id, err := c.Snapshot("run", fmt.Sprint("edit ", i), "")
		if err != nil {
			t.Fatal(err)
		}
		switch n := records(); {
		case i < 3 && n != i, n > 3, n < min(i, 2):
			t.Fatalf("command %d: %d records at the keeper's answer, MaxCount 2", i, n)
		case n == 3:
			extra++
		}
		must(t, os.WriteFile(filepath.Join(root, "notes.txt"), []byte(fmt.Sprint(i)), 0o644))
		if _, err := c.Finish(id); err != nil {
			t.Fatal(err)
		}
		c.Close()
		for deadline := time.Now().Add(time.Minute); records() > 2; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("command %d: %d records a minute after its answer: no upkeep", i, records())
			}
		}
	}
	if extra < (commands-2)/2 {
		t.Errorf("%d of %d answers past MaxCount found the store already pruned: the upkeep is in the command's path", commands-2-extra, commands-2)
	}
	// A client gone between its two requests: its record is pruned at the
	// connection's end, or as the keeper ends.
	c, err := Dial(o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Snapshot("run", "the last", ""); err != nil {
		t.Fatal(err)
	}
	c.Close()
	must(t, cmd.Process.Signal(syscall.SIGTERM))
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if n := records(); n != 2 {
		t.Errorf("%d records after the keeper ended, MaxCount 2", n)
	}
}

// TestKeeperLeaves: what a run's checkpoint leaves out (a sandboxed
// session's protected paths, checkpoint.Leave) reaches the keeper with each
// request: the keeper's checkpoints leave it out, and keep it again for a
// request that does not.
func TestKeeperLeaves(t *testing.T) {
	lab, root := checkpointtest.Project(t)
	o := checkpoint.Options{Root: root, Dir: filepath.Join(lab, "store")}
	startTestKeeper(t, o)
	c, err := Dial(o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	leave := &checkpoint.Leave{Paths: []string{".vscode"}}
	id, err := c.SnapshotLeaving(leave, "run", "plant", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".vscode"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".vscode", "tasks.json"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if sum, err := c.FinishLeaving(leave, id); err != nil || sum.Added != 0 {
		t.Errorf("the keeper's checkpoint after, leaving .vscode out: %v %+v", err, sum)
	}
	id, err = c.Snapshot("run", "keep", "")
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(root, ".vscode"))
	if sum, err := c.Finish(id); err != nil || sum.Deleted != 1 || sum.Changes[0].Path != ".vscode/tasks.json" {
		t.Errorf("the keeper's checkpoints keeping .vscode: %v %+v", err, sum)
	}
}
