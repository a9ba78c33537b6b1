package shellgate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/cgroup"
	"github.com/shellgate/shellgate/internal/lane"
)

// A one-shot run's helper started ahead (PrestartSandbox) becomes the
// command's session, the only helper, which ends by itself once the command
// has and nothing of it is left; for a command that is refused, invalid, or
// asked about, it is gone, reaped, with its cgroups, when Run returns (an
// ask: before the question), not at Close.
func TestPrestartedHelper(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newLab(t)
	cfg := shellgate.Config{Root: l.root}
	cfg.Policy.Ask = []string{"touch *"}
	// none says that no process this Gate started is left, not even unreaped,
	// and no cgroup: none that was not there before.
	type state struct {
		procs   map[int]string
		cgroups []string
	}
	now := func(t *testing.T) state { return state{children(), sessionCgroups(t)} }
	none := func(t *testing.T, before state, when string) {
		t.Helper()
		for pid, what := range children() {
			if _, ok := before.procs[pid]; !ok {
				t.Errorf("%s: process %d (%s) is left", when, pid, what)
			}
		}
		for _, dir := range sessionCgroups(t) {
			if !slices.Contains(before.cgroups, dir) {
				t.Errorf("%s: cgroup %s is left", when, dir)
			}
		}
	}
	for _, c := range []struct{ name, command string }{
		{"denied", "sudo id"},
		{"invalid", "echo \x00"},
		{"asked", "touch refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := now(t)
			g := gate(t, cfg)
			g.PrestartSandbox()
			asked := false
			ask := shellgate.WithApprover(func(context.Context, shellgate.Question) shellgate.Answer {
				asked = true
				none(t, before, "asked")
				return shellgate.Deny
			})
			env := g.Run(t.Context(), shellgate.Request{Command: c.command}, ask)
			if env.Status != envelope.Error || asked != (c.name == "asked") {
				t.Fatalf("asked %v: %s", asked, env.Text)
			}
			none(t, before, "returned")
		})
	}
	t.Run("run", func(t *testing.T) {
		before := now(t)
		g := gate(t, cfg)
		g.PrestartSandbox()
		// Counted while the command runs.
		counted := make(chan []int, 1)
		go func() {
			time.Sleep(300 * time.Millisecond)
			counted <- sandboxHelpers(t)
		}()
		env := g.Run(t.Context(), shellgate.Request{Command: "sleep 0.6; echo hi"})
		if env.Status != envelope.Success || env.Data.Stdout != "hi\n" {
			t.Fatalf("%s\n%s", env.Status, env.Text)
		}
		if sb, ok := env.Context.Sandbox.(map[string]any); !ok || sb["pid"] != "pidns" {
			t.Errorf("not sandboxed: %v", env.Context.Sandbox)
		}
		if h := <-counted; len(h) != 1 {
			t.Errorf("%d helpers ran, not one: %v", len(h), h)
		}
		// Its one command over with nothing of it left, the session's
		// helper ends by itself (sandbox.Spec.OneShot), before Close.
		for deadline := time.Now().Add(5 * time.Second); len(sandboxHelpers(t)) > 0 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		if h := sandboxHelpers(t); len(h) > 0 {
			t.Errorf("the helper outlived its one command: %v", h)
		}
		g.Close()
		none(t, before, "closed")
	})
}

// children are this process's children, unreaped ones too: PID → state and
// name.
func children() map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		if f := strings.Fields(string(stat[i+1:])); len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
			out[pid] = f[0] + " " + string(stat[:i+1])
		}
	}
	return out
}

// sessionCgroups are the cgroups of this process's sandbox sessions, in every
// hierarchy it is in.
func sessionCgroups(t *testing.T) []string {
	t.Helper()
	own, err := cgroup.Own()
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for controller, path := range own {
		base := filepath.Join(cgroup.Root, controller)
		if controller == "" && !cgroup.IsV2(cgroup.Root) {
			base = filepath.Join(cgroup.Root, "unified")
		}
		left, _ := filepath.Glob(filepath.Join(base, path, fmt.Sprintf("shellgate-%d-*", os.Getpid())))
		dirs = append(dirs, left...)
	}
	return dirs
}
