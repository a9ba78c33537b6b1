package jobs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/shellgate/shellgate/internal/runner"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestLogReads(t *testing.T) {
	l := NewLog(t.TempDir(), "out", 1<<20, nil)
	defer l.Remove()
	if l.Path() != "" {
		t.Fatal("an empty log has a file")
	}
	l.Write([]byte("one\ntwo\nthree\nfour\npart"))
	tests := []struct {
		name string
		got  Slice
		want string
		next int64
	}{
		{"since 0", l.readSince(0, 100), "one\ntwo\nthree\nfour\npart", 23},
		{"since 4", l.readSince(4, 100), "two\nthree\nfour\npart", 23},
		{"lines matching", l.readLines(0, 100, regexp.MustCompile("o").Match), "one\ntwo\nfour\n", 19},
		{"tail 2", l.tailLines(2, 100), "four\npart\n", 23},
		{"tail 9", l.tailLines(9, 100), "one\ntwo\nthree\nfour\npart\n", 23},
	}
	for _, tc := range tests {
		if tc.got.Text != tc.want || tc.got.Next != tc.next {
			t.Errorf("%s: %q next %d, want %q next %d", tc.name, tc.got.Text, tc.got.Next, tc.want, tc.next)
		}
	}
	// Past the budget: head and tail, and the count of what was left out.
	big := NewLog(t.TempDir(), "big", 1<<20, nil)
	defer big.Remove()
	big.Write([]byte(strings.Repeat("x", 10000)))
	s := big.readSince(0, 100)
	if s.Skipped != 9900 || !strings.HasPrefix(s.Text, strings.Repeat("x", 50)+"\n... [9900 bytes omitted") {
		t.Errorf("cut read: skipped %d, %q", s.Skipped, s.Text)
	}
}

// A log keeps the newest bytes, at most its cap on disk, in two files.
func TestLogCap(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir, "out", 10, nil)
	defer l.Remove()
	l.Write([]byte("0123456789abc"))
	l.Write([]byte("def"))
	if l.Total() != 16 {
		t.Errorf("total %d, want 16", l.Total())
	}
	files, _ := os.ReadDir(dir)
	var onDisk int64
	for _, f := range files {
		fi, _ := f.Info()
		onDisk += fi.Size()
	}
	if len(files) != 2 || onDisk > 10 {
		t.Fatalf("%d files, %d bytes on disk; want 2 files, at most 10 bytes", len(files), onDisk)
	}
	if s := l.readSince(0, 100); s.Text != "abcdef" || s.Skipped != 10 || s.Next != 16 {
		t.Errorf("read of a capped log: %q skipped %d next %d, want the newest 6 bytes", s.Text, s.Skipped, s.Next)
	}
	if s := l.readSince(12, 100); s.Text != "cdef" || s.Skipped != 0 {
		t.Errorf("read from 12: %q skipped %d", s.Text, s.Skipped)
	}
	if s := l.tailLines(1, 100); s.Text != "abcdef\n" {
		t.Errorf("tail: %q", s.Text)
	}
	l.Remove()
	if files, _ := os.ReadDir(dir); len(files) != 0 {
		t.Errorf("Remove left %d files", len(files))
	}
	l.Write([]byte("more")) // counted, not kept, no panic
}

// A server that logs for long still shows its latest lines.
func TestLogKeepsTheNewestLines(t *testing.T) {
	l := NewLog(t.TempDir(), "out", 1000, nil)
	defer l.Remove()
	for i := range 1000 {
		fmt.Fprintf(l, "request %d\n", i)
	}
	if s := l.tailLines(2, 1000); s.Text != "request 998\nrequest 999\n" {
		t.Errorf("tail after rotation: %q", s.Text)
	}
	if s := l.readLines(0, 1000, regexp.MustCompile("request 99[0-9]$").Match); !strings.HasSuffix(s.Text, "request 999\n") || s.Skipped == 0 {
		t.Errorf("filtered read after rotation: %q skipped %d", s.Text, s.Skipped)
	}
}

func TestTableLimitsAndKeep(t *testing.T) {
	tab := NewTable(Limits{MaxRunning: 2, MaxFinished: 1, Keep: time.Hour})
	spec := Spec{LogDir: t.TempDir(), LogMax: 1 << 20, Kill: func() {}}
	a, _ := tab.New(spec, true)
	b, _ := tab.New(spec, false)
	if _, ok := tab.Get(a.ID()); ok || len(tab.List()) != 0 {
		t.Fatal("a call not kept as a job is visible")
	}
	tab.Keep(a, true)
	must(t, tab.Keep(b, false))
	// Two jobs run: a third background job is refused, and a foreground call
	// (bounded by its caller) starts but cannot become a job.
	if _, err := tab.New(spec, true); err == nil || !strings.Contains(err.Error(), "2 jobs are running") {
		t.Fatalf("third job: %v", err)
	}
	c, err := tab.New(spec, false)
	if err != nil {
		t.Fatalf("a foreground call: %v", err)
	}
	if err := tab.Keep(c, false); err == nil {
		t.Fatal("a third job kept")
	}
	tab.Discard(c)
	if a.ID() != "j1" || b.ID() != "j2" {
		t.Fatalf("ids %s %s", a.ID(), b.ID())
	}
	a.Stdout.Write([]byte("a\n"))
	path := a.Stdout.Path()
	zero := 0
	a.Finish(runner.Result{ExitCode: &zero}, nil)
	b.Finish(runner.Result{ExitCode: &zero}, nil)
	// One ended job is remembered: the older one is forgotten with its files.
	if list := tab.List(); len(list) != 1 || list[0].ID() != "j2" {
		t.Fatalf("after both ended: %d jobs", len(list))
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the forgotten job's output file is still there")
	}
	if err := tab.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.New(spec, false); err == nil {
		t.Fatal("New after Close")
	}
}

func TestReadWaits(t *testing.T) {
	tab := NewTable(Limits{})
	defer tab.Close(context.Background())
	j, _ := tab.New(Spec{LogDir: t.TempDir(), LogMax: 1 << 20, Kill: func() {}}, true)
	tab.Keep(j, true)
	go func() {
		time.Sleep(50 * time.Millisecond)
		j.Stdout.Write([]byte("starting\n"))
		time.Sleep(50 * time.Millisecond)
		j.Stderr.Write([]byte("listening on :8080\n"))
	}()
	out := j.Read(context.Background(), ReadOptions{Until: regexp.MustCompile("listening"), Wait: 10 * time.Second})
	if !out.Matched || out.Stdout.Text != "starting\n" || out.Stderr.Text != "listening on :8080\n" {
		t.Fatalf("until listening: %+v", out)
	}
	// Nothing new: a read with a wait returns at the deadline, empty.
	out = j.Read(context.Background(), ReadOptions{Wait: 30 * time.Millisecond})
	if out.Stdout.Text != "" || out.Stderr.Text != "" || out.Matched {
		t.Fatalf("second read: %+v", out)
	}
	// A wait ends with the job.
	go j.Finish(runner.Result{}, nil)
	out = j.Read(context.Background(), ReadOptions{Wait: 10 * time.Second})
	if out.Info.State != "exited" {
		t.Fatalf("state after Finish: %s", out.Info.State)
	}
}

// openUnder counts this process's descriptors open on files in dir, removed
// ones included.
func openUnder(t *testing.T, dir string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd here")
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(target, dir+"/") {
			n++
		}
	}
	return n
}

// A file the log drops (rotated out, or removed with the log) is let go at
// once, not held open until a garbage collection: a server with many
// finished jobs would otherwise hold their deleted files' space.
func TestLogLetsGoOfDroppedFiles(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir, "out", 10, nil)
	for range 10 {
		l.Write([]byte("0123456789"))
	}
	l.readSince(0, 100) // a read leaves nothing open either
	if n := openUnder(t, dir); n > 4 {
		t.Errorf("%d descriptors open on the log's files; the two kept need at most 4", n)
	}
	l.Remove()
	if n := openUnder(t, dir); n != 0 {
		t.Errorf("%d descriptors still open on removed files", n)
	}
}

// A call's log is one file up to its cap, handed over whole as the call's
// spill file; one that goes on as a job keeps its newest bytes from then.
func TestCallLog(t *testing.T) {
	dir := t.TempDir()
	l := NewLog(dir, "out", 10, nil)
	l.Whole()
	l.Write([]byte("0123456789abc"))
	path, size, err := l.Handover()
	b, _ := os.ReadFile(path)
	if err != nil || size != 10 || string(b) != "0123456789" {
		t.Fatalf("handed over %q (%d bytes, %v), want the first 10 bytes", b, size, err)
	}
	l.Remove() // the caller owns the file now
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("a handed-over file was removed with the log: %v", err)
	}

	job := NewLog(dir, "job", 10, nil)
	defer job.Remove()
	job.Whole()
	job.Write([]byte("0123456789abc")) // past the call's cap: "abc" is counted only
	job.Rotate()
	job.Write([]byte("de"))
	if s := job.readSince(0, 100); s.Text != "de" || s.Skipped != 13 || s.Next != 15 {
		t.Errorf("a capped call gone on as a job reads %q, skipped %d, next %d", s.Text, s.Skipped, s.Next)
	}
	if path, _, _ := job.Handover(); path != "" {
		t.Errorf("a job's log handed over %s", path)
	}
}

// A stream's first bytes stay in memory: no file until it outgrows MemMax,
// a call's capture asks for its file (Handover), or a read left bytes out
// and must name a file holding them. Every byte reads the same either way.
func TestLogInMemoryFirst(t *testing.T) {
	dir := t.TempDir()
	files := func() int { f, _ := os.ReadDir(dir); return len(f) }
	l := NewLog(dir, "out", 1<<30, nil)
	l.Whole()
	l.Write([]byte("hello\n"))
	if files() != 0 || l.Path() != "" {
		t.Fatalf("%d files for 6 bytes", files())
	}
	if s := l.readSince(0, 100); s.Text != "hello\n" || s.Next != 6 || s.Skipped != 0 {
		t.Errorf("read from memory: %+v", s)
	}
	l.Remove()
	if files() != 0 {
		t.Fatal("a removed log left a file")
	}

	// Past MemMax: one file, holding everything from the first byte.
	big := NewLog(dir, "big", 1<<30, nil)
	defer big.Remove()
	big.Whole()
	want := bytes.Repeat([]byte("0123456789abcde\n"), MemMax/16)
	big.Write(want) // exactly MemMax: still in memory
	if files() != 0 {
		t.Fatal("MemMax bytes made a file")
	}
	big.Write([]byte("z\n"))
	want = append(want, "z\n"...)
	if files() != 1 {
		t.Fatalf("%d files past MemMax, want 1", files())
	}
	if got := big.readAt(0, len(want)+10); !bytes.Equal(got, want) {
		t.Errorf("read back %d bytes, want %d", len(got), len(want))
	}
	path, size, err := big.Handover()
	if got, _ := os.ReadFile(path); err != nil || size != int64(len(want)) || !bytes.Equal(got, want) {
		t.Errorf("handed over %d bytes (%v)", size, err)
	}
	os.Remove(path)

	// Handed over from memory: the file is made then, whole.
	small := NewLog(dir, "small", 1<<30, nil)
	small.Whole()
	small.Write([]byte("a\x00b"))
	path, size, err = small.Handover()
	if got, _ := os.ReadFile(path); err != nil || size != 3 || string(got) != "a\x00b" {
		t.Errorf("handed over from memory: %q %d %v", got, size, err)
	}
	small.Remove()
	os.Remove(path)
	if empty := NewLog(dir, "empty", 1<<30, nil); true {
		empty.Whole()
		if path, _, _ := empty.Handover(); path != "" || files() != 0 {
			t.Errorf("an empty log handed over %q", path)
		}
	}

	// A cut read names a file with all of it, made from memory then.
	job := NewLog(dir, "job", 1<<30, nil)
	defer job.Remove()
	job.Write([]byte(strings.Repeat("x", 1000)))
	s := job.readSince(0, 100)
	if s.Path == "" || !strings.Contains(s.Text, s.Path) || s.Skipped != 900 {
		t.Fatalf("a cut read from memory: %+v", s)
	}
	if got, _ := os.ReadFile(s.Path); len(got) != 1000 {
		t.Errorf("its file holds %d bytes, want 1000", len(got))
	}
	job.Write([]byte("yz"))
	if s := job.readSince(1000, 100); s.Text != "yz" {
		t.Errorf("read after the file was made: %q", s.Text)
	}
}

// A log whose file cannot be made still reads what memory holds, and counts
// the rest.
func TestLogInMemoryNoFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "file")
	must(t, os.WriteFile(dir, nil, 0o600)) // not a directory
	l := NewLog(dir, "out", 1<<20, nil)
	defer l.Remove()
	l.Whole()
	l.Write([]byte("kept\n"))
	l.Write(make([]byte, MemMax))
	if l.Total() != MemMax+5 {
		t.Errorf("total %d", l.Total())
	}
	if s := l.readSince(0, 4); !strings.HasPrefix(s.Text, "ke") || s.Skipped != MemMax+1 {
		t.Errorf("read: %q skipped %d", s.Text, s.Skipped)
	}
	if path, _, err := l.Handover(); path != "" || err == nil {
		t.Errorf("handed over %q, %v; want the error", path, err)
	}
}

// A job's log keeps less in memory than a call's (a session remembers many
// jobs): past JobMemMax it is in a file, and a call that goes on as a job
// with more than that in memory moves it to a file then.
func TestJobLogInMemoryCap(t *testing.T) {
	dir := t.TempDir()
	files := func() int { f, _ := os.ReadDir(dir); return len(f) }
	job := NewLog(dir, "job", 1<<30, nil)
	defer job.Remove()
	job.Write(make([]byte, JobMemMax))
	if files() != 0 {
		t.Fatal("JobMemMax bytes made a file")
	}
	job.Write([]byte("x"))
	if files() != 1 {
		t.Fatalf("%d files past JobMemMax, want 1", files())
	}

	call := NewLog(dir, "call", 1<<30, nil)
	defer call.Remove()
	call.Whole()
	call.Write(bytes.Repeat([]byte("y"), JobMemMax+1))
	if files() != 1 {
		t.Fatal("a call's JobMemMax+1 bytes made a file")
	}
	call.Rotate()
	if files() != 2 {
		t.Fatalf("a call gone on as a job with %d bytes in memory: %d files, want 2", JobMemMax+1, files())
	}
	call.Write([]byte("z"))
	if got := call.readAt(0, 2*JobMemMax); len(got) != JobMemMax+2 || got[JobMemMax+1] != 'z' {
		t.Errorf("read back %d bytes", len(got))
	}
}
