package runner

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// The ends of a call's pipes given to the command stay out of the runtime's
// poller (inherit.Pipe): os.Pipe added them and File.Fd took them back to
// blocking, ~5 calls a pipe for ends this process never reads or writes.
// Ours are in it, for the pumps.
func TestPipesChildEndsOutOfPoller(t *testing.T) {
	var ps pipeSet
	var out, errb bytes.Buffer
	if err := ps.open(Spec{Stdout: &out, Stderr: &errb}); err != nil {
		t.Fatal(err)
	}
	defer ps.closeOurEnds()
	defer ps.closeChildEnds()
	for i := range 2 {
		if err := ps.child[i].SetDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
			t.Errorf("stream %d: the command's end is in the poller (SetDeadline: %v)", i+1, err)
		}
		if err := ps.ours[i].SetDeadline(time.Now().Add(time.Second)); err != nil {
			t.Errorf("stream %d: our end is not in the poller: %v", i+1, err)
		}
	}
	stdin, copied, err := openStdin(strings.NewReader("in\n"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := stdin.SetDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
		t.Errorf("stdin: the command's end is in the poller (SetDeadline: %v)", err)
	}
	if b, err := io.ReadAll(stdin); string(b) != "in\n" || err != nil {
		t.Errorf("stdin read %q, %v", b, err)
	}
	<-copied
}
