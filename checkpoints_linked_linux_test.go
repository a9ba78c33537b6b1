package shellgate_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// An ignored file over ignored_max_size is kept by a hard link in the
// store: in the sandbox a command that writes it in place writes a copy
// (copy-up: the file has the store's name too), so undo puts the original
// back; without the sandbox, or over ignored_link_copy_max_size, the write
// reaches the store's link as well: the command's changes say it was
// written in place, and undo says it cannot restore the file, and leaves
// it. An rm, or an open that truncates, is undone at any size. The victim
// is under /var/tmp (the lab).
func TestUndoLinkedWrittenInPlace(t *testing.T) {
	lane.Live(t)
	cases := []struct {
		name    string
		mode    sandbox.Mode
		copyMax int64 // ignored_link_copy_max_size (0: the default, 16 MiB)
		cmd     string
		restore bool // undo brings the original back
	}{
		{"sandbox-append", sandbox.On, 0, "echo more >> data.log", true},
		{"sandbox-truncate", sandbox.On, 0, ": > data.log", true},
		{"sandbox-notrunc", sandbox.On, 0, "printf xxxx | dd of=data.log conv=notrunc status=none", true},
		{"no-sandbox-append", sandbox.Off, 0, "echo more >> data.log", false},
		{"sandbox-over-copy-max-append", sandbox.On, 100000, "echo more >> data.log", false},
		{"sandbox-over-copy-max-notrunc", sandbox.On, 100000, "printf xxxx | dd of=data.log conv=notrunc status=none", false},
		{"sandbox-over-copy-max-truncate", sandbox.On, 100000, ": > data.log", true},
		{"sandbox-over-copy-max-rm", sandbox.On, 100000, "rm data.log", true},
		{"sandbox-copy-none-mv", sandbox.On, -1, "echo x > n.tmp && mv n.tmp data.log", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.mode == sandbox.On {
				requireSandbox(t)
			}
			l := newCPLab(t, c.mode, func(cfg *shellgate.Config) { cfg.Checkpoints.LinkCopyMaxSize = c.copyMax })
			checkpointtest.Sh(t, l.root, "head -c 300000 /dev/urandom > data.log && chmod 640 data.log")
			want, _ := os.ReadFile(filepath.Join(l.root, "data.log"))
			env := l.g.Run(context.Background(), shellgate.Request{Command: c.cmd})
			if env.Error != nil || env.Data.Changed == nil {
				t.Fatalf("%s: %s", c.cmd, env.Text)
			}
			made, _ := os.ReadFile(filepath.Join(l.root, "data.log"))
			if bytes.Equal(made, want) && !strings.HasPrefix(c.cmd, "rm") {
				t.Fatalf("%s did not change data.log", c.cmd)
			}
			cp, err := l.g.Checkpoints()
			if err != nil {
				t.Fatal(err)
			}
			_, sum, err := cp.Undo(env.Data.Changed.Checkpoint)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(filepath.Join(l.root, "data.log"))
			if c.restore {
				if !bytes.Equal(got, want) || len(sum.NotRestored) != 0 {
					t.Errorf("undo of %q: data.log %d bytes (want the original %d), not restored %+v", c.cmd, len(got), len(want), sum.NotRestored)
				}
				if fi, err := os.Stat(filepath.Join(l.root, "data.log")); err != nil || fi.Mode().Perm() != 0o640 {
					t.Errorf("data.log's mode after undo: %v %v", fi, err)
				}
				return
			}
			if !bytes.Equal(got, made) || len(sum.NotRestored) != 1 || !strings.Contains(sum.NotRestored[0].Why, "written in place") {
				t.Errorf("undo of %q: not restored %+v, data.log changed by undo: %v", c.cmd, sum.NotRestored, !bytes.Equal(got, made))
			}
			if paths := strings.Join(env.Data.Changed.Paths, ", "); !strings.Contains(paths, "modified data.log (written in place: undo cannot put back") {
				t.Errorf("%q changed %q, want data.log said written in place", c.cmd, paths)
			}
		})
	}
}

// A read-write open that writes nothing (sqlite's for a SELECT; here bash's
// `<>`) of a linked file in the sandbox is no change: copy-up copies it
// before the open, and the checkpoint after keeps the copy, of the same
// bytes, by the version's link; a later write of the copy, in place, is
// undone from that link.
func TestLinkedReadWriteOpenWritesNothing(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	l := newCPLab(t, sandbox.On, nil)
	checkpointtest.Sh(t, l.root, "head -c 300000 /dev/urandom > data.log && chmod 640 data.log")
	want, _ := os.ReadFile(filepath.Join(l.root, "data.log"))
	for range 2 {
		env := l.g.Run(context.Background(), shellgate.Request{Command: "exec 3<>data.log; echo opened"})
		if env.Error != nil || env.Data.Changed == nil {
			t.Fatalf("the open: %s", env.Text)
		}
		if c := env.Data.Changed; c.Modified+c.Added+c.Deleted != 0 || strings.Contains(env.Text, "[Changed") {
			t.Errorf("a read-write open that wrote nothing changed %+v:\n%s", c.Paths, env.Text)
		}
	}
	env := l.g.Run(context.Background(), shellgate.Request{Command: "echo more >> data.log"})
	if env.Data.Changed == nil || strings.Join(env.Data.Changed.Paths, "") != "modified data.log" {
		t.Fatalf("the write: %s", env.Text)
	}
	cp, err := l.g.Checkpoints()
	if err != nil {
		t.Fatal(err)
	}
	if _, sum, err := cp.Undo(env.Data.Changed.Checkpoint); err != nil || len(sum.NotRestored) != 0 {
		t.Fatalf("undo: %v, not restored %+v", err, sum.NotRestored)
	}
	if got, _ := os.ReadFile(filepath.Join(l.root, "data.log")); !bytes.Equal(got, want) {
		t.Errorf("data.log after undo: %d bytes, want the original %d", len(got), len(want))
	}
}
