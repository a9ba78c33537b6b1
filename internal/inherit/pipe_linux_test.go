package inherit

import (
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Pipe's end for the child is a plain blocking descriptor outside the
// runtime's poller; ours is in it (deadlines work); what the child end
// carries arrives, then EOF once it is closed, either way round.
func TestPipeChildEndPlain(t *testing.T) {
	for _, childReads := range []bool{false, true} {
		ours, child, err := Pipe(childReads)
		if err != nil {
			t.Fatal(err)
		}
		if err := child.SetDeadline(time.Now().Add(time.Second)); !errors.Is(err, os.ErrNoDeadline) {
			t.Errorf("childReads %v: the child's end is in the poller (SetDeadline: %v)", childReads, err)
		}
		if fl, err := unix.FcntlInt(child.Fd(), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK != 0 {
			t.Errorf("childReads %v: the child's end is not blocking: %#x %v", childReads, fl, err)
		}
		if fl, err := unix.FcntlInt(ours.Fd(), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC == 0 {
			t.Errorf("childReads %v: our end is not close-on-exec: %#x %v", childReads, fl, err)
		}
		if err := ours.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Errorf("childReads %v: our end is not in the poller: %v", childReads, err)
		}
		r, w := ours, child
		if childReads {
			r, w = child, ours
		}
		go func() {
			w.Write([]byte("hi\n"))
			w.Close()
		}()
		b, err := io.ReadAll(r)
		if string(b) != "hi\n" || err != nil {
			t.Errorf("childReads %v: read %q, %v", childReads, b, err)
		}
		r.Close()
	}
}
