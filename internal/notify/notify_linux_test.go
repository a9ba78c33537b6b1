package notify

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/seccomp"
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

// While no call is pending, Serve waits in the runtime's poller, not in the
// blocking ioctl: a goroutine in a system call ties up its P until the
// runtime's monitor takes it back, and a helper has only one (GOMAXPROCS=1),
// so whatever woke meanwhile (the reaper at a command's exit) waited up to
// 10 ms for it.
func TestServeWaitsWithoutASystemCall(t *testing.T) {
	listener := make(chan int, 1)
	done := make(chan struct{})
	go func() {
		// The thread ends with the goroutine, and the filter with it; not
		// the process's main thread, which the runtime keeps.
		if !lockOtherThread() {
			listener <- -1
			return
		}
		fd, err := seccomp.InstallNotify(seccomp.WriteOpens)
		if err != nil {
			listener <- -1
			return
		}
		listener <- fd
		<-done
	}()
	fd := <-listener
	if fd < 0 {
		close(done)
		t.Skip("no notifying seccomp filter here, or no thread but the main one for it")
	}
	served := make(chan struct{})
	go func() {
		Serve(fd, func(*Caller, *Notif) Result { return Fail(unix.EPERM) })
		close(served)
	}()
	// Once its only caller's thread is gone, Serve returns (rather than
	// spinning on a listener no call can come to).
	defer func() {
		close(done)
		select {
		case <-served:
		case <-time.After(5 * time.Second):
			t.Error("Serve went on after every caller was gone")
		}
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(stacks, "\n\n") {
			if strings.Contains(g, "notify.receive") {
				if strings.Contains(g, "[syscall") {
					t.Fatalf("Serve waits for a call in a system call:\n%s", g)
				}
				if strings.Contains(g, "[IO wait") {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("Serve's goroutine never waited in the poller")
		}
	}
}

// Serve asks for synchronous wake-ups (syncWakeUp), which Linux takes
// from 6.6: the kernel here must not refuse it.
func TestSyncWakeUpTaken(t *testing.T) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	var major, minor int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(u.Release[:]), "%d.%d", &major, &minor); err != nil {
		t.Skipf("kernel release %q: %v", u.Release[:], err)
	}
	got := make(chan error, 1)
	go func() {
		// Never unlocked: the filter ends with the thread (not the main
		// one, which the runtime keeps).
		if !lockOtherThread() {
			got <- errors.New("skip: on the main thread")
			return
		}
		fd, err := seccomp.InstallNotify(seccomp.WriteOpens)
		if err != nil {
			got <- fmt.Errorf("skip: %w", err)
			return
		}
		defer unix.Close(fd)
		got <- syncWakeUp(fd)
	}()
	err := <-got
	if err != nil && strings.HasPrefix(err.Error(), "skip: ") {
		t.Skip(err)
	}
	if old := major < 6 || major == 6 && minor < 6; old != (err != nil) {
		t.Errorf("Linux %d.%d: synchronous wake-ups: %v", major, minor, err)
	}
}

// lockOtherThread locks the calling goroutine to a thread other than the
// process's main one, and reports whether it found one.
func lockOtherThread() bool {
	for range 100 {
		if runtime.LockOSThread(); unix.Gettid() != unix.Getpid() {
			return true
		}
		runtime.UnlockOSThread()
		time.Sleep(time.Millisecond)
	}
	return false
}
