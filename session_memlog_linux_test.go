package shellgate_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// creations watches dir and the directories under it for files made in them
// (inotify: a file made and removed at once is seen too).
type creations struct {
	fd    int
	names map[int32]string
}

func watchCreations(t *testing.T, dir string) *creations {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("no inotify: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	c := &creations{fd: fd, names: map[int32]string{}}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			wd, err := unix.InotifyAddWatch(fd, path, unix.IN_CREATE)
			if err != nil {
				t.Fatal(err)
			}
			c.names[int32(wd)] = path
		}
		return nil
	})
	return c
}

// made returns the paths made since the watch began, or since the last call.
func (c *creations) made() []string {
	var out []string
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(c.fd, buf)
		if n <= 0 || err != nil {
			return out
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := string(bytes.TrimRight(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)], "\x00"))
			out = append(out, filepath.Join(c.names[ev.Wd], name))
			off += unix.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

// A call that prints little makes no file at all, in either sandbox mode:
// not even a job log made and removed at once (on ext4 each such file costs
// the next one a search past every recently deleted inode). Nor does a
// background job that prints little, read with job_output.
func TestSessionSmallCallsMakeNoFile(t *testing.T) {
	lane.Live(t)
	for _, mode := range []sandbox.Mode{"auto", "off"} {
		t.Run(string(mode), func(t *testing.T) {
			spill := t.TempDir()
			s, _ := session(t, shellgate.Config{SpillDir: spill, Sandbox: shellgate.SandboxConfig{Mode: mode}}, shellgate.SessionConfig{})
			// A first call that spills makes the session's own directory.
			env := srun(t, s, shellgate.Request{Command: "head -c 200000 /dev/zero | tr '\\0' x"})
			if env.Data.FullOutputPath == nil {
				t.Fatalf("200000 bytes did not spill: %s", env.Text)
			}
			w := watchCreations(t, spill)
			for _, cmd := range []string{"echo hi", "echo oops >&2; exit 3", "seq 1 5000", "printf 'a\\0b'", "true"} {
				env := srun(t, s, shellgate.Request{Command: cmd})
				if env.Data.FullOutputPath != nil {
					t.Errorf("%s: spilled to %s", cmd, *env.Data.FullOutputPath)
				}
			}
			job := srun(t, s, shellgate.Request{Command: "sleep 0.2; echo late; echo late-err >&2", RunInBackground: true})
			if job.Data.Job == nil {
				t.Fatalf("no job: %s", job.Text)
			}
			out := s.Output(context.Background(), job.Data.Job.ID, shellgate.JobRead{Until: "late", WaitMS: 10000})
			out = s.Output(context.Background(), job.Data.Job.ID, shellgate.JobRead{WaitMS: 10000})
			for out.Data.Job.State == envelope.JobRunning {
				out = s.Output(context.Background(), job.Data.Job.ID, shellgate.JobRead{WaitMS: 10000})
			}
			tail := s.Output(context.Background(), job.Data.Job.ID, shellgate.JobRead{TailLines: 5})
			if tail.Data.Stdout != "late\n" || tail.Data.Stderr != "late-err\n" {
				t.Errorf("the job's output: %q, %q\n%s", tail.Data.Stdout, tail.Data.Stderr, tail.Text)
			}
			if made := w.made(); len(made) > 0 {
				t.Errorf("calls that printed little made files: %v", made)
			}
		})
	}
}

// Output kept in memory still reaches a file whenever one is named: cut by
// the call's budget but under the memory's cap, painted with terminal
// control, binary, or past the cap; each file holds every byte, and the
// digest numbers its lines in that file.
func TestSessionSpillsWholeFromMemory(t *testing.T) {
	lane.Live(t)
	s, _ := session(t, shellgate.Config{SpillDir: t.TempDir()}, shellgate.SessionConfig{})
	for _, tc := range []struct {
		name, cmd string
		want      func() []byte
	}{
		{"cut under the memory cap", "seq 1 12000", func() []byte { return seqBytes(12000) }},
		{"cut past the memory cap", "seq 1 30000", func() []byte { return seqBytes(30000) }},
		{"controls", `printf 'ab\rcd\n'`, func() []byte { return []byte("ab\rcd\n") }},
		{"binary", `printf 'x\0\1\2y'`, func() []byte { return []byte("x\x00\x01\x02y") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := srun(t, s, shellgate.Request{Command: tc.cmd})
			if env.Data.FullOutputPath == nil {
				t.Fatalf("no full output path: %s", env.Text)
			}
			// A foreground call's file is named as a spill file, not a job's
			// (it was N.job-stdout.log).
			if name := filepath.Base(*env.Data.FullOutputPath); !regexp.MustCompile(`^[0-9]+\.stdout\.log$`).MatchString(name) {
				t.Errorf("the full output file is %s, want N.stdout.log", name)
			}
			got, err := os.ReadFile(*env.Data.FullOutputPath)
			if want := tc.want(); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("the full output file holds %d bytes (%v), want %d", len(got), err, len(want))
			}
		})
	}
	// The digest of a cut output under the cap: a line of the middle, numbered in the file.
	env := srun(t, s, shellgate.Request{Command: "seq 1 6000; echo 'error: disk on fire'; seq 6002 12000"})
	if !strings.Contains(env.Data.Digest, "stdout line 6001: error: disk on fire") {
		t.Errorf("digest %q, want line 6001", env.Data.Digest)
	}
}

func seqBytes(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		b.WriteString(itoa(i))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// A background job's output that comes after its call returned, little and
// then much, is all there to read: reads since the last one, a cut read that
// names the file holding the whole stream (made from memory when the read is
// cut), until, and the last lines.
func TestSessionJobOutputAfterCall(t *testing.T) {
	lane.Live(t)
	s, _ := session(t, shellgate.Config{SpillDir: t.TempDir()}, shellgate.SessionConfig{})
	ctx := context.Background()
	job := srun(t, s, shellgate.Request{Command: "echo first; sleep 1; seq 1 20; sleep 1; seq 1 30000; echo done", RunInBackground: true})
	if job.Data.Job == nil {
		t.Fatalf("no job: %s", job.Text)
	}
	id := job.Data.Job.ID
	// The call that started the job gives the output so far, and that may
	// already be the first line; else the first read waits for it.
	if job.Data.Stdout != "first\n" {
		if out := s.Output(ctx, id, shellgate.JobRead{Until: "first", WaitMS: 10000}); job.Data.Stdout+out.Data.Stdout != "first\n" {
			t.Fatalf("first read %q after %q\n%s", out.Data.Stdout, job.Data.Stdout, out.Text)
		}
	}
	// Small, in memory: a read cut by max_output_bytes still names a file with all of it.
	out := s.Output(ctx, id, shellgate.JobRead{Until: "^20$", WaitMS: 10000, MaxOutputBytes: 20})
	if !out.Data.Truncated {
		t.Fatalf("a 51-byte read within 20 bytes is not cut: %q\n%s", out.Data.Stdout, out.Text)
	}
	path := regexp.MustCompile(`full output: (/[^\s\]]+)`).FindStringSubmatch(out.Text)
	if path == nil {
		t.Fatalf("a cut read names no file: %s", out.Text)
	}
	if got, err := os.ReadFile(path[1]); err != nil || string(got) != "first\n"+string(seqBytes(20)) {
		t.Fatalf("the named file holds %q (%v)", got, err)
	}
	// Then much more than memory keeps, after the file was made.
	out = s.Output(ctx, id, shellgate.JobRead{Until: "^done$", WaitMS: 20000})
	if !out.Data.Truncated || !strings.HasSuffix(out.Data.Stdout, "30000\ndone\n") {
		t.Fatalf("the rest: truncated %v, ends %q", out.Data.Truncated, out.Data.Stdout[max(0, len(out.Data.Stdout)-40):])
	}
	want := "first\n" + string(seqBytes(20)) + string(seqBytes(30000)) + "done\n"
	if got, err := os.ReadFile(path[1]); err != nil || string(got) != want {
		t.Fatalf("the job's file holds %d bytes (%v), want %d", len(got), err, len(want))
	}
	if tail := s.Output(ctx, id, shellgate.JobRead{TailLines: 2}); tail.Data.Stdout != "30000\ndone\n" {
		t.Errorf("tail: %q", tail.Data.Stdout)
	}
}
