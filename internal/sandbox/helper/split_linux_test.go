package helper

import (
	"net"
	"os"
	"testing"

	"github.com/shellgate/shellgate/internal/procfs"
)

// A frame read on one side must wake no poller on the other: the reader's
// consumption of a frame wakes every watcher of the writer's end (the
// kernel's write-space wake), so the end each side writes is watched by no
// epoll instance, and the end it reads is. Both sides are wired as they are
// for a session: shellgate's reading end through package net (start_linux.go),
// the helper's through its file transport (helperMain), each writing through
// Split.
func TestSplitWatchesOnlyReadEnds(t *testing.T) {
	down, up, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	ino := func(fd int) uint64 {
		n, err := procfs.SocketInode(os.Getpid(), fd)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	ends := []struct {
		name    string
		inode   uint64
		watched bool
	}{
		{"shellgate's reading end (up)", ino(up[0]), true},
		{"shellgate's writing end (down)", ino(down[0]), false},
		{"the helper's reading end (down)", ino(down[1]), true},
		{"the helper's writing end (up)", ino(up[1]), false},
	}
	f := os.NewFile(uintptr(up[0]), "up")
	fc, err := net.FileConn(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	ours, err := Split(unixConn{fc.(*net.UnixConn)}, down[0])
	if err != nil {
		t.Fatal(err)
	}
	defer ours.Close()
	in, err := newFileTransport(down[1])
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := Split(in, up[1])
	if err != nil {
		t.Fatal(err)
	}
	defer theirs.Close()
	s, h := NewConn(ours), NewConn(theirs)
	// A frame each way, so that both readers have waited in the poller.
	got := make(chan error, 1)
	go func() {
		m, _, err := h.Recv(nil)
		if err == nil && m.Op != "spawn" {
			t.Errorf("the helper read %q", m.Op)
		}
		if err == nil {
			err = h.Send(&Message{Op: "started"}, nil)
		}
		got <- err
	}()
	if err := s.Send(&Message{Op: "spawn"}, nil); err != nil {
		t.Fatal(err)
	}
	if m, _, err := s.Recv(nil); err != nil || m.Op != "started" {
		t.Fatalf("shellgate read %v, %v", m, err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	watched, err := procfs.EpollWatches(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ends {
		if watched[e.inode] != e.watched {
			t.Errorf("%s: watched by an epoll instance %v, want %v", e.name, watched[e.inode], e.watched)
		}
	}
}

type unixConn struct{ *net.UnixConn }

func (c unixConn) WriteMsg(b, oob []byte) (int, error) {
	n, _, err := c.WriteMsgUnix(b, oob, nil)
	return n, err
}

func (c unixConn) ReadMsg(b, oob []byte) (int, int, error) {
	n, oobn, _, _, err := c.ReadMsgUnix(b, oob)
	return n, oobn, err
}
