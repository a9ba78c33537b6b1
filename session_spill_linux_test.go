package shellgate_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/lane"
)

// A session call's large output is on disk once, while the call runs and
// after it, in the file the envelope names; nothing removed stays open.
func TestSessionOutputOnDiskOnce(t *testing.T) {
	lane.Live(t)
	spill := t.TempDir()
	s, _ := session(t, shellgate.Config{SpillDir: spill}, shellgate.SessionConfig{})
	const size = 8 << 20
	// When the last byte has reached the call, every copy kept so far holds it.
	var whenAll int64 = -1
	watch := shellgate.WithOutput(func(o shellgate.Output) {
		if o.Stream == "stdout" && o.Total == size {
			whenAll = bytesUnder(t, spill)
		}
	})
	env := s.Run(context.Background(), shellgate.Request{Command: "yes 0123456789abcde | head -c 8388608"}, watch)
	if env.Data.FullOutputPath == nil {
		t.Fatalf("no full output file: %s", env.Text)
	}
	if whenAll < 0 {
		t.Fatalf("the output never reached %d bytes: %s", size, env.Text)
	}
	if whenAll > size+size/8 {
		t.Errorf("%d bytes on disk for an output of %d while the call ran: written twice", whenAll, size)
	}
	if after := bytesUnder(t, spill); after != size {
		t.Errorf("%d bytes on disk after the call for an output of %d", after, size)
	}
	got, err := os.ReadFile(*env.Data.FullOutputPath)
	if err != nil || len(got) != size || !bytes.Equal(got[:32], []byte("0123456789abcde\n0123456789abcde\n")) {
		t.Fatalf("the full output file has %d bytes (%v), not the output", len(got), err)
	}
	for _, f := range openDeleted(t, spill) {
		t.Errorf("a removed output file is still open: %s", f)
	}
}

// bytesUnder sums the sizes of the files under dir.
func bytesUnder(t *testing.T, dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// openDeleted lists the files under dir that this process holds open after
// they were removed: disk space no one can see, held until they are closed.
func openDeleted(t *testing.T, dir string) []string {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name()))
		if err == nil && strings.HasPrefix(target, dir+"/") && strings.HasSuffix(target, " (deleted)") {
			held = append(held, target)
		}
	}
	return held
}

// A Gate that spilled nothing leaves no empty spill directory in the temp
// dir; one whose spill file is kept leaves it, with the file.
func TestSpillRootRemovedWhenEmpty(t *testing.T) {
	lane.Live(t)
	t.Setenv("TMPDIR", t.TempDir())
	shared := filepath.Join(os.TempDir(), "shellgate-spill-"+strconv.Itoa(os.Getuid()))
	for _, tc := range []struct {
		command string
		kept    bool
	}{
		{"echo hi", false},
		{"seq 1 100000", true},
	} {
		g, err := shellgate.New(shellgate.Config{Root: newLab(t).root})
		if err != nil {
			t.Fatal(err)
		}
		env := g.Run(context.Background(), shellgate.Request{Command: tc.command})
		if _, err := os.Stat(shared); err != nil {
			t.Fatalf("%s: no spill directory while the Gate runs (%v): %s", tc.command, err, env.Text)
		}
		g.Close()
		if _, err := os.Stat(shared); (err == nil) != tc.kept {
			t.Errorf("%s: spill directory after Close: %v, want kept=%v", tc.command, err, tc.kept)
		}
		if tc.kept && (env.Data.FullOutputPath == nil || !strings.HasPrefix(*env.Data.FullOutputPath, shared+"/")) {
			t.Errorf("%s: the full output is not kept in %s: %s", tc.command, shared, env.Text)
		}
	}
}

// A live session's full output files stay within SpillTotal together: the
// oldest go to make room for the newest, which is whole.
func TestSessionSpillTotal(t *testing.T) {
	lane.Live(t)
	spill := t.TempDir()
	s, _ := session(t, shellgate.Config{SpillDir: spill, SpillTotal: 1 << 20}, shellgate.SessionConfig{})
	var last envelope.Envelope
	for range 4 {
		last = srun(t, s, shellgate.Request{Command: "yes 0123456789abcde | head -c 409600"})
		if n := bytesUnder(t, spill); n > 1<<20 {
			t.Fatalf("%d bytes of full output files, over SpillTotal (1 MiB): %s", n, last.Text)
		}
	}
	if last.Data.FullOutputPath == nil {
		t.Fatalf("no full output file: %s", last.Text)
	}
	if fi, err := os.Stat(*last.Data.FullOutputPath); err != nil || fi.Size() != 409600 {
		t.Errorf("the newest full output file: %v %v", fi, err)
	}
}
