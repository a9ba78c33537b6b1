package audit

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"
)

// lines reads every line of the log files at path, path.1, …, oldest first,
// failing the test on a line that is not one whole JSON object.
func lines(t *testing.T, path string) []map[string]any {
	t.Helper()
	var files []string
	for i := 1; ; i++ {
		if _, err := os.Stat(fmt.Sprintf("%s.%d", path, i)); err != nil {
			break
		}
		files = append([]string{fmt.Sprintf("%s.%d", path, i)}, files...)
	}
	files = append(files, path)
	var out []map[string]any
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("%s: a line that is not JSON: %v\n%q", name, err, sc.Text())
			}
			out = append(out, m)
		}
		f.Close()
	}
	return out
}

func open(t *testing.T, path string, o Options) *Log {
	t.Helper()
	l, err := Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestWriteEntry(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "shellgate", FileName)
	l := open(t, path, Options{})
	code := 3
	when := time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600))
	must(t, l.Write(Entry{Event: EventResult, Call: "c1", Description: "build it with GITHUB_TOKEN=abc", Time: when, Session: "s1", Root: "/r", Directory: "sub", Command: "GITHUB_TOKEN=abc make\necho <b>",
		Decision: "allow", Sandboxed: map[string]string{"fs": "landlock-v7"}, Status: "partial", ExitCode: &code, DurationMS: 12, StdoutBytes: 5}))
	must(t, l.Write(Entry{Command: "sudo x", Decision: "deny", Rule: "privilege", Status: "error", Error: "POLICY_DENIED"}))

	got := lines(t, path)
	if len(got) != 2 {
		t.Fatalf("%d lines, want 2", len(got))
	}
	first := got[0]
	want := map[string]any{
		"event": "result", "call": "c1", "description": "build it with GITHUB_TOKEN=[REDACTED]",
		"time": "2025-01-02T02:04:05.000000006Z", "session": "s1", "pid": float64(os.Getpid()), "root": "/r", "directory": "sub",
		"command": "GITHUB_TOKEN=[REDACTED] make\necho <b>", "command_bytes": float64(len("GITHUB_TOKEN=abc make\necho <b>")),
		"decision": "allow", "rule": "", "approved": "", "relied_on_sandbox": false, "sandboxed": map[string]any{"fs": "landlock-v7"},
		"status": "partial", "error": "", "exit_code": float64(3), "signal": "", "timed_out": false, "cancelled": false,
		"duration_ms": float64(12), "stdout_bytes": float64(5), "stderr_bytes": float64(0), "truncated": false,
	}
	if fmt.Sprint(first) != fmt.Sprint(want) {
		t.Errorf("entry\n got %v\nwant %v", first, want)
	}
	if got[1]["exit_code"] != nil || got[1]["sandboxed"] != nil || got[1]["rule"] != "privilege" {
		t.Errorf("second entry: %v", got[1])
	}
	if ts, _ := time.Parse(time.RFC3339Nano, got[1]["time"].(string)); time.Since(ts) > time.Minute || !strings.HasSuffix(got[1]["time"].(string), "Z") {
		t.Errorf("a zero Time is not now in UTC: %v", got[1]["time"])
	}
}

func TestCommandCapped(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	l := open(t, path, Options{})
	long := strings.Repeat("é", MaxCommand) // two bytes each: the cut must not split one
	must(t, l.Write(Entry{Command: long}))
	e := lines(t, path)[0]
	cmd := e["command"].(string)
	if len(cmd) > MaxCommand || !strings.HasSuffix(cmd, "é…") || e["command_bytes"] != float64(len(long)) {
		t.Errorf("capped command is %d bytes ending %q, command_bytes %v", len(cmd), cmd[len(cmd)-8:], e["command_bytes"])
	}
}

func TestRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	l := open(t, path, Options{MaxBytes: 2048, Keep: 2})
	for i := range 40 {
		must(t, l.Write(Entry{Command: fmt.Sprintf("echo %d", i)}))
	}
	for _, name := range []string{path, path + ".1", path + ".2"} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 2048 {
			t.Errorf("%s is %d bytes, more than the 2048 allowed", name, fi.Size())
		}
	}
	if _, err := os.Stat(path + ".3"); err == nil {
		t.Errorf("a third rotated file is kept, want only 2")
	}
	got := lines(t, path)
	// The newest lines are all there, in order; the oldest were dropped.
	last := got[len(got)-1]["command"]
	if last != "echo 39" || len(got) >= 40 || len(got) < 10 {
		t.Errorf("%d lines, last %v", len(got), last)
	}
	for i := 1; i < len(got); i++ {
		var a, b int
		fmt.Sscanf(got[i-1]["command"].(string), "echo %d", &a)
		fmt.Sscanf(got[i]["command"].(string), "echo %d", &b)
		if b != a+1 {
			t.Fatalf("line %d is %q after %q: a line is missing", i, got[i]["command"], got[i-1]["command"])
		}
	}
}

// A line longer than the limit still goes in, alone in a fresh file.
func TestRotationOversizedLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	l := open(t, path, Options{MaxBytes: 1024, Keep: 1})
	must(t, l.Write(Entry{Command: "a"}))
	must(t, l.Write(Entry{Command: strings.Repeat("b", 3000)}))
	if got := lines(t, path); len(got) != 2 || got[1]["command_bytes"] != float64(3000) {
		t.Errorf("got %v", got)
	}
}

// Many goroutines on two Logs of one file (as two processes would be: separate
// open files, separate locks), rotating all the while: every line is whole and
// none is lost.
func TestConcurrentWriters(t *testing.T) {
	lane.Live(t)
	path := filepath.Join(t.TempDir(), FileName)
	logs := []*Log{open(t, path, Options{MaxBytes: 16 << 10, Keep: MaxKeep}), open(t, path, Options{MaxBytes: 16 << 10, Keep: MaxKeep})}
	const writers, each = 16, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				// Long enough that a torn write would show.
				cmd := fmt.Sprintf("w%d-%d %s", w, i, strings.Repeat("x", 300))
				if err := logs[w%2].Write(Entry{Command: cmd, Session: "s"}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	got := lines(t, path)
	seen := map[string]bool{}
	for _, e := range got {
		id, _, _ := strings.Cut(e["command"].(string), " ")
		seen[id] = true
	}
	if len(got) != writers*each || len(seen) != writers*each {
		t.Errorf("%d lines, %d distinct, want %d", len(got), len(seen), writers*each)
	}
	if _, err := os.Stat(path + ".2"); err != nil {
		t.Errorf("the test did not rotate: %v", err)
	}
}

func TestPermissions(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	dir := filepath.Join(t.TempDir(), "new")
	path := filepath.Join(dir, FileName)
	l := open(t, path, Options{MaxBytes: 1024, Keep: 1})
	for range 10 {
		must(t, l.Write(Entry{Command: strings.Repeat("y", 200)}))
	}
	for name, want := range map[string]os.FileMode{dir: 0o700, path: 0o600, path + ".1": 0o600} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
	// A log the user made readable by others is tightened when opened.
	loose := filepath.Join(t.TempDir(), FileName)
	must(t, os.WriteFile(loose, nil, 0o644))
	open(t, loose, Options{})
	if fi, _ := os.Stat(loose); fi.Mode().Perm() != 0o600 {
		t.Errorf("an existing 0644 log was left %v", fi.Mode().Perm())
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	must(t, os.WriteFile(file, nil, 0o600))
	tests := []struct {
		path string
		opts Options
		want string
	}{
		{filepath.Join(file, "audit.jsonl"), Options{}, "not a directory"}, // even root cannot
		{dir, Options{}, "audit log"},                                      // a directory
		{filepath.Join(dir, "a"), Options{MaxBytes: 10}, "want at least 1024"},
		{filepath.Join(dir, "a"), Options{Keep: -1}, "want 1 to 100"},
		{filepath.Join(dir, "a"), Options{Keep: 101}, "want 1 to 100"},
	}
	for _, tt := range tests {
		l, err := Open(tt.path, tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Open(%q, %+v) = %v, want an error with %q", tt.path, tt.opts, err, tt.want)
		}
		if l != nil {
			l.Close()
		}
	}
}

// The file removed or replaced under an open Log (by a user, or another process's
// rotation): the next line goes to the file now at the path.
func TestFollowsThePath(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	l := open(t, path, Options{})
	must(t, l.Write(Entry{Command: "one"}))
	must(t, os.Rename(path, path+".moved"))
	must(t, l.Write(Entry{Command: "two"}))
	if got := lines(t, path); len(got) != 1 || got[0]["command"] != "two" {
		t.Errorf("after the file moved: %v", got)
	}
	must(t, l.Close())
	if err := l.Write(Entry{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close: %v", err)
	}
}

func TestDefaultPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		goos, home string
		env        map[string]string
		want       string // "" for an error
	}{
		{"linux", "/home/u", nil, "/home/u/.local/state/shellgate/audit.jsonl"},
		{"linux", "/home/u", map[string]string{"XDG_STATE_HOME": "/xdg"}, "/xdg/shellgate/audit.jsonl"},
		{"linux", "/home/u", map[string]string{"XDG_STATE_HOME": "rel"}, "/home/u/.local/state/shellgate/audit.jsonl"},
		{"freebsd", "/home/u", nil, "/home/u/.local/state/shellgate/audit.jsonl"},
		{"darwin", "/Users/u", map[string]string{"XDG_STATE_HOME": "/xdg"}, "/Users/u/Library/Logs/shellgate/audit.jsonl"},
		{"windows", "/Users/u", map[string]string{"LocalAppData": "/AppData/Local"}, "/AppData/Local/shellgate/audit.jsonl"},
		{"windows", "/Users/u", nil, "/Users/u/AppData/Local/shellgate/audit.jsonl"},
		{"linux", "", nil, ""},
	}
	for _, tt := range tests {
		got, err := defaultPath(tt.goos, tt.home, env(tt.env))
		if got != filepath.FromSlash(tt.want) || (err != nil) != (tt.want == "") {
			t.Errorf("defaultPath(%s, %q, %v) = %q, %v; want %q", tt.goos, tt.home, tt.env, got, err, tt.want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The cost of a line, fsync included, beside the same write without it: what
// every request pays for a log that survives a crash.
func BenchmarkWrite(b *testing.B) {
	e := Entry{Root: "/home/u/project", Directory: ".", Command: "go test ./... -run TestX", Decision: "allow", Status: "success", Sandboxed: "off"}
	// Log: a write per line, fsync'd by the syncer in batches; beside it a
	// bare append and an append with a synchronous fsync per line.
	b.Run("log", func(b *testing.B) {
		l, err := Open(filepath.Join(b.TempDir(), FileName), Options{MaxBytes: 1 << 30})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		for b.Loop() {
			if err := l.Write(e); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, sync := range []bool{false, true} {
		name := map[bool]string{false: "append", true: "append+fsync"}[sync]
		b.Run(name, func(b *testing.B) {
			f, err := os.OpenFile(filepath.Join(b.TempDir(), FileName), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			for b.Loop() {
				line, _ := json.Marshal(e)
				f.Write(append(line, '\n'))
				if sync {
					f.Sync()
				}
			}
		})
	}
}

// Close syncs what was written itself instead of waiting for the syncer's
// delay: a one-shot `shellgate run` would otherwise pay SyncDelay on exit.
func TestCloseDoesNotWaitForTheSyncer(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	l, err := Open(path, Options{})
	must(t, err)
	l.syncDelay = time.Hour
	must(t, l.Write(Entry{Command: "echo hi", Decision: "allow"}))
	done := make(chan error)
	go func() { done <- l.Close() }()
	select {
	case err := <-done:
		must(t, err)
	case <-time.After(time.Minute):
		t.Fatal("Close is waiting out the syncer's delay")
	}
	if got := lines(t, path); len(got) != 1 || got[0]["command"] != "echo hi" {
		t.Errorf("the log holds %v", got)
	}
}

// The directory is synced when a name in it is new — the log created, or made
// afresh by a rotation — and not at every open of a log already there, where it
// cost a one-shot `shellgate run` 1–5 ms. Sync and Close leave nothing unsynced.
func TestDirectorySyncedForNewNamesOnly(t *testing.T) {
	var synced []string
	syncNewName = func(dir string) { synced = append(synced, dir) }
	t.Cleanup(func() { syncNewName = syncDir })
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	for i, want := range []int{1, 1, 1} { // created, then opened twice
		l, err := Open(path, Options{})
		must(t, err)
		must(t, l.Write(Entry{Command: fmt.Sprintf("echo %d", i)}))
		must(t, l.Sync())
		must(t, l.Close())
		if len(synced) != want {
			t.Fatalf("open %d: the directory was synced %d times, want %d", i+1, len(synced), want)
		}
	}
	l := open(t, path, Options{MaxBytes: 1024, Keep: 1})
	for i := range 20 { // past MaxBytes: a rotation makes a new file
		must(t, l.Write(Entry{Command: fmt.Sprintf("echo %d", i)}))
	}
	if len(synced) < 2 || synced[len(synced)-1] != dir {
		t.Errorf("after a rotation the directory syncs are %v, want a new one of %s", synced, dir)
	}
	if got := lines(t, path); got[len(got)-1]["command"] != "echo 19" {
		t.Errorf("the last line is %v", got[len(got)-1])
	}
}

// TestHugeCommandRedactedOnlyWhereKept: a command of 1 MiB is redacted only
// in the part the line keeps (redacting all of it took seconds of CPU before
// the cap threw it away): writing it costs what writing its first 12 KiB
// does. A secret that starts just before the cap is still redacted.
func TestHugeCommandRedactedOnlyWhereKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	l := open(t, path, Options{})
	filler := strings.Repeat("x=1 ", (MaxCommand-40)/4)
	huge := filler + "API_TOKEN=s3cr3t-" + strings.Repeat("k", 1<<20)
	// The least of five writes: a GC between two empties the regexp
	// package's pools, and refilling them costs as much as a write.
	allocated := func(cmd string) uint64 {
		least := uint64(math.MaxUint64)
		for range 5 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			must(t, l.Write(Entry{Command: cmd, Description: cmd}))
			runtime.ReadMemStats(&after)
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		return least
	}
	allocated(huge) // the patterns compiled
	head := huge[:3*MaxCommand]
	if h, n := allocated(head), allocated(huge); n > 2*h {
		t.Errorf("writing the 1 MiB command allocated %d KiB, its first 12 KiB %d KiB: all of it was redacted", n>>10, h>>10)
	}
	all := lines(t, path)
	e := all[len(all)-1] // the last whole write
	for _, field := range []string{"command", "description"} {
		if s := e[field].(string); strings.Contains(s, "s3cr3t") || !strings.Contains(s, "API_TOKEN=") {
			t.Errorf("%s ends %q: the secret at the cap is not redacted", field, s[len(s)-60:])
		}
	}
}

// TestTornLineRepaired: a line cut short (a write that filled the disk, a
// writer killed mid-line) is not merged with the next one: the next Write
// ends it, says so in a line of its own (event "gap"), and its own entry is
// a whole line — from this process's failed write or from another's.
func TestTornLineRepaired(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	whole := `{"event":"result","command":"echo before"}` + "\n"
	torn := `{"event":"result","command":"echo cut sh`
	if err := os.WriteFile(path, []byte(whole+torn), 0o600); err != nil {
		t.Fatal(err)
	}
	l := open(t, path, Options{})
	must(t, l.Write(Entry{Event: EventResult, Command: "echo after"}))
	must(t, l.Write(Entry{Event: EventResult, Command: "echo later"}))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(got) != 5 || got[0]+"\n" != whole || got[1] != torn {
		t.Fatalf("want the whole line, the torn one ended, a gap, the two new entries; got:\n%s", b)
	}
	for i, want := range map[int]string{2: EventGap, 3: EventResult, 4: EventResult} {
		var e Entry
		if err := json.Unmarshal([]byte(got[i]), &e); err != nil || e.Event != want {
			t.Errorf("line %d %q: want a whole %s entry (%v)", i+1, got[i], want, err)
		}
	}
}
