package shellgate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// TestGateDiskFull: a command that fills the disk the store is on gets, in
// its own result, what failed, that it ran, and the file to free — not the
// store's raw "tmp_obj …: no space left on device" — and the next command's
// refusal says it was not run. On a 40 MB tmpfs in a mount namespace of its
// own (skipped where none can be had).
func TestGateDiskFull(t *testing.T) {
	lane.Live(t)
	checkpointtest.OnSmallTmpfs(t, "TestGateDiskFull", gateDiskFull)
}

func gateDiskFull(t *testing.T, lab, fs string) {
	root := filepath.Join(fs, "project")
	os.Mkdir(root, 0o755)
	checkpointtest.MakeRepo(t, root)
	os.Mkdir(filepath.Join(lab, "tmp"), 0o755)
	g, err := shellgate.New(shellgate.Config{Root: root, SpillDir: filepath.Join(lab, "spill"), TempDir: filepath.Join(lab, "tmp"),
		Sandbox:     shellgate.SandboxConfig{Mode: sandbox.Off},
		Checkpoints: shellgate.CheckpointConfig{Dir: filepath.Join(fs, "store")}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	env := g.Run(context.Background(), shellgate.Request{Command: "rm -rf src; head -c 100000000 /dev/zero > fill; true"})
	if env.Error != nil {
		t.Fatalf("the command: %s", env.Text)
	}
	for _, want := range []string{"to checkpoint the root after command 1: the command ran and what it changed is in place, but not recorded", "Free space", "fill ("} {
		if !strings.Contains(env.Text, want) {
			t.Errorf("the command's result does not say %q:\n%s", want, env.Text)
		}
	}
	if strings.Contains(env.Text, "tmp_obj") {
		t.Errorf("the command's result shows the store's raw error:\n%s", env.Text)
	}
	next := g.Run(context.Background(), shellgate.Request{Command: "touch ran.txt"})
	if next.Error == nil || next.Error.Code != envelope.CheckpointFailed || !strings.Contains(next.Error.Message, "before the command: it was not run, nothing changed. Free space, then run it again") {
		t.Errorf("the next command on a full disk: %s", next.Text)
	}
	if _, err := os.Stat(filepath.Join(root, "ran.txt")); err == nil {
		t.Errorf("the next command ran")
	}
}
