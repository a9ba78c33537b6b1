package hook

import (
	"os"
	"testing"
	"time"
)

func TestAskedNotes(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	if TakeAsked("/p", "docker run x") {
		t.Fatal("a note nobody wrote")
	}
	if err := NoteAsked("/p", "docker run x"); err != nil {
		t.Fatal(err)
	}
	if TakeAsked("/q", "docker run x") || TakeAsked("/p", "docker run y") {
		t.Error("a note for another root or command")
	}
	if !TakeAsked("/p", "docker run x") {
		t.Error("the note was not taken")
	}
	if TakeAsked("/p", "docker run x") {
		t.Error("one note approved two runs")
	}

	// An expired note approves nothing, and the next note sweeps it away.
	NoteAsked("/p", "old")
	path, _ := askedPath("/p", "old")
	long := time.Now().Add(-askedFor - time.Minute)
	os.Chtimes(path, long, long)
	if TakeAsked("/p", "old") {
		t.Error("an expired note was taken")
	}
	NoteAsked("/p", "old")
	os.Chtimes(path, long, long)
	NoteAsked("/p", "new")
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the expired note is still there: %v", err)
	}
}
