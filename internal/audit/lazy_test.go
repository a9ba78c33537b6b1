package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// A lazy log touches no file before its first entry; one it cannot open is
// reported once and tried again at the next entry; after Close it drops
// entries; a nil one is off.
func TestLazy(t *testing.T) {
	var off *Lazy
	off.Write(Entry{Command: "x"})
	off.Sync()
	if err := off.Close(); err != nil || off.Append(Entry{}) != nil {
		t.Errorf("a nil Lazy is not a log that is off: %v", err)
	}

	dir := t.TempDir()
	unused := filepath.Join(dir, "unused", "audit.jsonl")
	if _, err := NewLazy(unused, Options{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(unused)); !os.IsNotExist(err) {
		t.Errorf("a log with no entry made its directory: %v", err)
	}

	blocker := filepath.Join(dir, "logs") // a file where the log's directory goes
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(blocker, "audit.jsonl")
	var reported []error
	a, err := NewLazy(path, Options{}, func(err error) { reported = append(reported, err) })
	if err != nil {
		t.Fatal(err)
	}
	a.Write(Entry{Command: "first"})
	a.Write(Entry{Command: "second"})
	if len(reported) != 1 {
		t.Fatalf("failures reported %d times, want once: %v", len(reported), reported)
	}
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	a.Write(Entry{Command: "third"})
	a.Sync()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a.Write(Entry{Command: "after close"})
	b, err := os.ReadFile(path)
	if err != nil || bytes.Count(b, []byte("\n")) != 1 || !bytes.Contains(b, []byte(`"third"`)) {
		t.Errorf("log after a retry and Close: %v\n%s", err, b)
	}

	if _, err := NewLazy(path, Options{Keep: MaxKeep + 1}, nil); err == nil {
		t.Error("NewLazy took options out of range")
	}
}
