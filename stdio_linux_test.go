package shellgate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// WithStdio gives the command the caller's own pipe or socket as its stdout
// (it writes there itself, in the order it writes), and a regular file
// through a pipe of shellgate's: a descriptor of a file outside the root
// would let it truncate the file or write anywhere in it. With the sandbox
// and without, through a Gate and a Session.
func TestStdioPassesPipesAndSocketsOnly(t *testing.T) {
	lane.Live(t)
	for _, mode := range []sandbox.Mode{sandbox.Auto, sandbox.Off} {
		for _, face := range []string{"gate", "session"} {
			for _, kind := range []string{"pipe", "socket", "file"} {
				t.Run(fmt.Sprintf("%s/%s/%s", mode, face, kind), func(t *testing.T) {
					out, back, want := stdioFile(t, kind)
					l := newLab(t)
					g := gate(t, shellgate.Config{Root: l.root, Sandbox: shellgate.SandboxConfig{Mode: mode}})
					call := g.Run
					if face == "session" {
						s := g.NewSession(shellgate.SessionConfig{})
						defer s.Close()
						call = s.Run
					}
					env := call(context.Background(), shellgate.Request{Command: "readlink /proc/self/fd/1 >&2"}, shellgate.WithStdio(nil, out, out))
					if env.Status != envelope.Success {
						t.Fatalf("%s", env.Text)
					}
					got := back()
					if kind == "file" {
						if !strings.HasPrefix(got, "pipe:[") {
							t.Errorf("the command's stdout is %q, want a pipe of shellgate's", got)
						}
					} else if got != want {
						t.Errorf("the command's stdout is %q, want the caller's %q", got, want)
					}
				})
			}
		}
	}
}

// stdioFile is what a caller gives WithStdio as out, how the command names
// it in /proc/self/fd when it is its own, and back, which closes out and
// reads what was written to it.
func stdioFile(t *testing.T, kind string) (out *os.File, back func() string, name string) {
	t.Helper()
	var r *os.File
	var err error
	switch kind {
	case "pipe":
		r, out, err = os.Pipe()
		must(t, err)
	case "socket":
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		must(t, err)
		r, out = os.NewFile(uintptr(fds[0]), "ours"), os.NewFile(uintptr(fds[1]), "theirs")
	case "file":
		out, err = os.Create(filepath.Join(t.TempDir(), "out"))
		must(t, err)
	}
	t.Cleanup(func() { out.Close() })
	var st syscall.Stat_t
	must(t, syscall.Fstat(int(out.Fd()), &st))
	back = func() string {
		if r == nil {
			b, err := os.ReadFile(out.Name())
			must(t, err)
			return strings.TrimSpace(string(b))
		}
		defer r.Close()
		out.Close()
		b := make([]byte, 4096)
		n, err := r.Read(b)
		must(t, err)
		b = b[:n]
		return strings.TrimSpace(string(b))
	}
	return out, back, fmt.Sprintf("%s:[%d]", kind, st.Ino)
}
