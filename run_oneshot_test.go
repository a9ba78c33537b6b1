package shellgate_test

import (
	"os"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// The one-call Run works in the current directory and leaves nothing running,
// and its text says so.
func TestOneCallRun(t *testing.T) {
	lane.Live(t)
	dir := t.TempDir()
	t.Chdir(dir)
	tag := newTag() // in the sandbox the command sees PIDs of its own namespace: find it by its environment
	name, value, _ := strings.Cut(tag.String(), "=")
	t.Setenv(name, value)
	env := shellgate.Run(t.Context(), shellgate.Request{Command: "pwd; sleep 30 & echo started"})
	lines := strings.Fields(env.Data.Stdout)
	if env.Status != envelope.Success || len(lines) != 2 || !strings.HasSuffix(lines[0], dirName(dir)) ||
		!strings.Contains(env.Text, "[Background processes stopped at exit: ") || strings.Contains(env.Text, "still running") {
		t.Fatalf("%s\n%s", env.Status, env.Text)
	}
	for pid, cmd := range tagged(tag.String()) {
		t.Errorf("pid %d (%s) outlived the one-call Run", pid, cmd)
	}
}

// Without a usable current directory, the one-call Run says so in an envelope.
func TestOneCallRunWithoutADirectory(t *testing.T) {
	dir := t.TempDir() + "/gone"
	must(t, os.Mkdir(dir, 0o755))
	t.Chdir(dir)
	must(t, os.Remove(dir))
	env := shellgate.Run(t.Context(), shellgate.Request{Command: "touch x"})
	if env.Status != envelope.Error || env.Error == nil || env.Error.Code != envelope.ExecutionError || env.Data.Command != "touch x" {
		t.Errorf("%+v\n%s", env.Error, env.Text)
	}
}

func dirName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
