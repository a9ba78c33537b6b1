package shellgate_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// Checking a command does no housekeeping: the spill dir is swept when a command
// first runs, not when a Gate is made.
func TestSweepOnlyWhenRunning(t *testing.T) {
	l := newLab(t)
	spill := t.TempDir()
	old := filepath.Join(spill, "0123456789abcdef0123456789abcdef.stdout.log")
	must(t, os.WriteFile(old, []byte("old"), 0o600))
	past := time.Now().Add(-48 * time.Hour)
	must(t, os.Chtimes(old, past, past))

	g, err := shellgate.New(shellgate.Config{Root: l.root, SpillDir: spill})
	must(t, err)
	g.Check(shellgate.Request{Command: "echo hi"})
	if _, err := os.Stat(old); err != nil {
		t.Fatalf("New or Check swept the spill dir: %v", err)
	}
	run(t, g, shellgate.Request{Command: "true"})
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a run did not sweep the expired spill file: %v", err)
	}
	must(t, g.Close())
}

// A closed Gate runs nothing, whether or not it ran anything before (Close skips the
// process search when nothing ran, which must not open a gap).
func TestRunAfterCloseHavingRun(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	for _, ranBefore := range []bool{false, true} {
		g, err := shellgate.New(shellgate.Config{Root: l.root, SpillDir: t.TempDir()})
		must(t, err)
		if ranBefore {
			run(t, g, shellgate.Request{Command: "true"})
		}
		must(t, g.Close())
		env := g.Run(t.Context(), shellgate.Request{Command: "touch made"})
		if env.Error == nil || env.Error.Code != envelope.Cancelled {
			t.Errorf("ran before %v: %+v", ranBefore, env.Error)
		}
		if _, err := os.Stat(filepath.Join(l.root, "made")); err == nil {
			t.Errorf("ran before %v: a closed Gate ran a command", ranBefore)
		}
	}
}
