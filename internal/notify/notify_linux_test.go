package notify

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// The descriptor an answer places in the caller's table is closed here
// before the answer lets the caller go: a copy held on would keep a file the
// caller wrote busy for its exec (ETXTBSY).
func TestAnswerClosesItsDescriptorBeforeSending(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ours, err := unix.Dup(int(w.Fd()))
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	open := true
	beforeSend = func() { _, err := unix.FcntlInt(uintptr(ours), unix.F_GETFD, 0); open = err == nil }
	defer func() { beforeSend = func() {} }()
	devNull, err := os.Open(os.DevNull) // no listener: the ioctls fail, the order stays
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	answer(int(devNull.Fd()), 1, Result{FD: ours})
	if open {
		unix.Close(ours)
		t.Error("the descriptor was still open when the answer was sent")
	}
}
