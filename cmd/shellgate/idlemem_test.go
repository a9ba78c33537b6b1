//go:build !shellgate_nomcp

package main

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// A server's stdin and stdout through the trim: a reply written, then quiet,
// frees memory; a request read afterwards arms it again.
func TestIdleTrimFreesAfterActivity(t *testing.T) {
	freed := make(chan struct{}, 1)
	trim := newIdleTrim(time.Millisecond, func() { freed <- struct{}{} })
	defer trim.stop()
	if _, err := io.WriteString(trim.writer(io.Discard), "{}\n"); err != nil {
		t.Fatal(err)
	}
	wait := func(after string) {
		select {
		case <-freed:
		case <-time.After(10 * time.Second):
			t.Fatalf("nothing freed after %s and quiet", after)
		}
	}
	wait("a reply")
	if _, err := io.ReadAll(trim.reader(strings.NewReader("{}\n"))); err != nil {
		t.Fatal(err)
	}
	wait("a request")
}

// The trim is armed only by activity, and never again once stopped.
func TestIdleTrimArmedByActivityOnly(t *testing.T) {
	trim := newIdleTrim(time.Hour, func() { t.Error("freed") })
	if trim.timer.Stop() {
		t.Error("armed before any activity: a server no client spoke to has nothing to free")
	}
	trim.touch()
	if !trim.timer.Stop() {
		t.Error("a touch did not arm it")
	}
	trim.stop()
	trim.touch()
	if trim.timer.Stop() {
		t.Error("a touch after stop armed it")
	}
}

// The transport closes stdin to end a read still waiting: the trim's reader
// must pass that on.
func TestIdleTrimReaderCloses(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	trim := newIdleTrim(time.Hour, func() {})
	defer trim.stop()
	rc, ok := trim.reader(r).(io.Closer)
	if !ok {
		t.Fatal("the trim's reader cannot be closed")
	}
	done := make(chan error, 1)
	go func() { _, err := r.Read(make([]byte, 1)); done <- err }()
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("the waiting read ended with %v, want %v", err, os.ErrClosed)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("closing the trim's reader left a read waiting on stdin")
	}
}
