package idmap

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Through a tree, every file is nobody's and nothing can be written; the
// directory itself is as it was.
func TestOthers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("idmapped mounts of the host's files need its root")
	}
	dir := secretDir(t)
	tree, err := Others(dir)
	if err != nil {
		t.Skipf("no idmapped mounts here: %v", err)
	}
	defer tree.Close()
	if !Works(dir) {
		t.Error("Works says no where Others worked")
	}
	var st unix.Stat_t
	if err := unix.Fstatat(int(tree.Fd()), "secret", &st, 0); err != nil {
		t.Fatal(err)
	}
	if st.Uid != nobody || st.Gid != nobody {
		t.Errorf("through the tree: owner %d:%d, want nobody's", st.Uid, st.Gid)
	}
	if _, err := unix.Openat(int(tree.Fd()), "secret", unix.O_WRONLY|unix.O_CLOEXEC, 0); !errors.Is(err, unix.EROFS) {
		t.Errorf("opened for writing through the tree: %v", err)
	}
	if err := unix.Stat(filepath.Join(dir, "secret"), &st); err != nil || st.Uid != 0 {
		t.Errorf("the directory itself: owner %d, %v", st.Uid, err)
	}
	if _, err := Others(filepath.Join(dir, "missing")); err == nil {
		t.Error("a tree of a missing directory")
	}
}

// The mapping's user namespace is made without starting a program in it: its
// child stops at its exec and is killed there, where a holder that ran was
// this executable started again (~500 page faults, ~3 ms of CPU for each
// session start as root).
func TestMappingStartsNoProgram(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("idmapped mounts of the host's files need its root")
	}
	var before, after unix.Rusage
	unix.Getrusage(unix.RUSAGE_CHILDREN, &before)
	ns, err := newMapping()
	if err != nil {
		t.Skipf("no user namespace here: %v", err)
	}
	defer ns.Close()
	unix.Getrusage(unix.RUSAGE_CHILDREN, &after)
	faults := after.Minflt - before.Minflt
	t.Logf("the child took %d page faults", faults)
	if faults > 100 {
		t.Errorf("the child that made the namespace took %d page faults: it ran", faults)
	}
	var ours, theirs unix.Stat_t
	if err := unix.Stat("/proc/self/ns/user", &ours); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fstat(int(ns.Fd()), &theirs); err != nil || theirs.Ino == ours.Ino {
		t.Errorf("the mapping's namespace is ours, or none: %v", err)
	}
	if _, err := unix.Wait4(-1, nil, unix.WNOHANG|unix.WALL, nil); err != unix.ECHILD {
		t.Errorf("a child left behind: %v", err)
	}
}

// The child that makes the namespace shares the process's memory until its
// exec (a vfork): a fork would copy the process's page tables and
// write-protect every page it had written, each then faulted again at its
// next write (a one-shot run's, on its way to the command).
func TestMappingCopiesNoMemory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("idmapped mounts of the host's files need its root")
	}
	const size, page = 16 << 20, 4096
	buf, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(buf)
	unix.Madvise(buf, unix.MADV_NOHUGEPAGE) // one fault a page, as most of a heap
	for i := 0; i < size; i += page {
		buf[i] = 1
	}
	var before, after unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &before)
	ns, err := newMapping()
	if err != nil {
		t.Skipf("no user namespace here: %v", err)
	}
	ns.Close()
	for i := 0; i < size; i += page {
		buf[i] = 2
	}
	unix.Getrusage(unix.RUSAGE_SELF, &after)
	if faults := after.Minflt - before.Minflt; faults > size/page/4 {
		t.Errorf("writing %d pages again after the namespace was made took %d page faults: the child copied the memory map", size/page, faults)
	}
}

// The tree Works makes to find out is the next Others of the directory,
// made once however many ask at once: a detached tree's close waits for an
// RCU grace period, and one moved into a session's view frees nothing when
// closed. One left untaken is closed after spareFor, and Others makes a
// new one.
func TestWorksLeavesItsTreeToOthers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("idmapped mounts of the host's files need its root")
	}
	dir := secretDir(t)
	before := made.Load()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !Works(dir) {
				t.Error("Works says no")
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.Skip("no idmapped mounts here")
	}
	if n := made.Load() - before; n != 1 {
		t.Errorf("8 Works at once made %d trees, want 1", n)
	}
	tree, err := Others(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	if n := made.Load() - before; n != 1 {
		t.Errorf("Others after Works made a tree of its own (%d made)", n)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(int(tree.Fd()), "secret", &st, 0); err != nil || st.Uid != nobody {
		t.Errorf("through the spare tree: owner %d, %v", st.Uid, err)
	}
	again, err := Others(dir)
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if n := made.Load() - before; n != 2 {
		t.Errorf("a second Others took the spare again (%d made)", n)
	}

	// Untaken, it goes after spareFor.
	spareFor = 50 * time.Millisecond
	t.Cleanup(func() { spareFor = 2 * time.Second })
	other := secretDir(t)
	if !Works(other) {
		t.Fatal("Works says no")
	}
	p := probeOf(other)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		p.mu.Lock()
		gone := p.spare == nil
		p.mu.Unlock()
		if gone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the spare was kept past spareFor")
		}
	}
	n := made.Load()
	if t2, err := Others(other); err != nil {
		t.Fatal(err)
	} else {
		t2.Close()
	}
	if made.Load() != n+1 {
		t.Error("Others took a spare that was closed")
	}
}

// secretDir is a directory outside /tmp holding a file only root may read.
func secretDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "idmap-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// BenchmarkMapping: making the mapping's user namespace (newMapping), as a
// session's start as root does once per process.
func BenchmarkMapping(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("idmapped mounts of the host's files need its root")
	}
	for b.Loop() {
		ns, err := newMapping()
		if err != nil {
			b.Skipf("no user namespace here: %v", err)
		}
		ns.Close()
	}
}
