package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/shellgate/shellgate/internal/lane"
)

// A bare session — what Start falls back to where the kernel makes no user
// namespace — starts each command through the confining wrapper (this test
// binary, as shellgate's executable in use): writes land in the root and
// nowhere else, vsock sockets are refused, and the report says what applies
// and that the namespaces are missing.
func TestBareSession(t *testing.T) {
	lane.Live(t)
	if _, err := llsys.LandlockGetABIVersion(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	l := newLab(t)
	s, err := startBare(l.spec(), "refused for the test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	r := s.Report()
	if !strings.HasPrefix(r.Layers[LayerFS], "landlock-v") || r.Layers[LayerSeccomp] != "filter" || r.Layers[LayerTmp] != "" || r.Layers[LayerNet] != "" {
		t.Errorf("layers: %v", r.Layers)
	}
	if len(r.Missing) == 0 || !strings.HasPrefix(r.Missing[0], "userns: refused for the test, so no mount, network or PID namespace") {
		t.Errorf("missing: %q", r.Missing)
	}
	if why := r.Uncontained(); !strings.HasPrefix(why, "userns: ") {
		t.Errorf("Uncontained() = %q, want the userns entry", why)
	}

	out, code := run(t, s, l.root, "echo in > made && cat made && echo x > "+filepath.Join(l.outside, "victim"))
	if code == 0 || !strings.Contains(out, "in\n") || !strings.Contains(out, "Permission denied") {
		t.Errorf("a write outside the root: exit %d, %q", code, out)
	}
	l.outsideIntact(t, "bare session")
	if out, code := run(t, s, l.root, `python3 -c "import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)" 2>&1 | tail -1`); code != 0 || !strings.Contains(out, "Address family not supported") {
		if _, err := os.Stat("/usr/bin/python3"); err == nil {
			t.Errorf("a vsock socket: exit %d, %q", code, out)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Launch([]string{"/bin/true"}, nil, l.root, nil, nil, nil); err == nil {
		t.Error("a closed bare session started a command")
	}
}
