package shellgate_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/quarantinelog"
)

// What the sandbox moves into the quarantine as a killed shellgate's session
// ends is told by the next session in the root, in its first envelope and the
// audit log, once; a command can add nothing to that report, neither by
// writing the log nor by filling the quarantine directory.
func TestKilledSessionsQuarantineIsToldNextTime(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	bin := buildShellgate(t)
	base := visibleTempDir(t)
	root, state, auditLog := filepath.Join(base, "root"), filepath.Join(base, "state"), filepath.Join(base, "audit.jsonl")
	for _, d := range []string{root, filepath.Join(base, "home"), filepath.Join(base, "tmp")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	tag := newTag()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(base, "home"), "TMPDIR=" + filepath.Join(base, "tmp"),
		"XDG_STATE_HOME=" + state, "SHELLGATE_AUDIT_LOG=" + auditLog, tag.String()}
	shellgateRun := func(command string) *exec.Cmd {
		cmd := exec.Command(bin, "run", "--json", "--root", root, "--", command)
		cmd.Dir, cmd.Env = root, env
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		return cmd
	}
	envrc := filepath.Join(root, ".envrc")
	killed := shellgateRun(`f=.env$(printf rc); echo 'touch PWNED' > "$f"; sleep 30`)
	must(t, killed.Start())
	if !eventually(func() bool { return exists(envrc) }) {
		killed.Process.Kill()
		killed.Wait()
		t.Fatal("the command never wrote .envrc")
	}
	must(t, killed.Process.Kill())
	killed.Wait()
	if !eventually(func() bool { return !exists(envrc) }) {
		t.Fatal("the session of the killed shellgate left .envrc in the root")
	}

	log := quarantinelog.Path(filepath.Join(state, "shellgate", "quarantine"), root)
	// A line as the helper writes it, for a file the command made, into the
	// log by its path and by the helper's descriptor; and a quarantine item
	// of the command's own.
	forge := `python3 -c '
import json, os, sys
open("forged.txt", "w").write("x")
st = os.stat("forged.txt")
line = json.dumps({"from": os.path.abspath(".envrc"), "to": os.path.abspath("forged.txt"), "dev": st.st_dev, "ino": st.st_ino}) + "\n"
for path in (sys.argv[1], "/proc/1/fd/4"):
    try:
        open(path, "a").write(line)
        print("wrote", path)
    except OSError as e:
        print(e)
os.makedirs(".shellgate-quarantine/forged/.vs" + "code")
' ` + log
	told := envelopeText(t, shellgateRun(forge))
	if !strings.Contains(told, "no one was told: .envrc to .shellgate-quarantine/") {
		t.Errorf("the next session's first envelope does not tell the moved .envrc:\n%s", told)
	}
	if strings.Contains(told, "wrote ") {
		t.Errorf("a command wrote the quarantine log:\n%s", told)
	}
	if again := envelopeText(t, shellgateRun("true")); strings.Contains(again, "no one was told") {
		t.Errorf("told again, or a command's forgery told:\n%s", again)
	}
	f, err := os.Open(auditLog)
	must(t, err)
	defer f.Close()
	var events []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var e struct {
			Event string
			Moved []string
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Event == "quarantined" {
			events = append(events, strings.Join(e.Moved, "; "))
		}
	}
	if len(events) != 1 || !strings.HasPrefix(events[0], ".envrc → .shellgate-quarantine/") {
		t.Errorf("audit log's quarantined events: %q, want the one .envrc", events)
	}
}

// eventually polls ok for a while: what another process finishes on its own.
func eventually(ok func() bool) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ok() {
			return true
		}
	}
	return ok()
}

// envelopeText runs cmd (shellgate run --json) and returns its envelope's text.
func envelopeText(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out, _ := cmd.Output()
	var e struct{ Text string }
	if err := json.Unmarshal(out, &e); err != nil {
		t.Fatalf("no envelope: %v\n%s", err, out)
	}
	return e.Text
}
