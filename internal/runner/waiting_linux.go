package runner

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/shellgate/shellgate/internal/procfs"
)

// WaitingForInput reports whether a process of the command led by pgid — its
// session or its process group, in this process's PID numbering, which is also
// how /proc shows sandboxed processes — is blocked waiting to read from input:
//
//   - input is our end of the command's stdin pipe: some process sleeps in
//     read (read, readv, pread64, preadv, preadv2) on the pipe, or in poll,
//     select or epoll with the pipe among what it waits to read;
//   - input is the master of the command's pseudo-terminal (Spec.Terminal):
//     the same, with the terminal's slave instead of the pipe. A line-editing
//     prompt (GNU readline in bash -i, python3's REPL) waits in one of these on
//     the terminal.
//
// A process waiting on something else (a socket, another pipe, a timer) is not
// waiting for input, nor is one that also waits on input but has other fds in
// the same call — a server or a TUI that refreshes — unless the caller sees no
// output coming either; that judgement is the caller's. It reads
// /proc/PID/syscall and, for poll and select, the process's memory: allowed for
// the processes we started (ptrace access to our own descendants).
//
// Only Linux can tell; elsewhere WaitingForInput reports false.
func WaitingForInput(pgid int, input *os.File) bool {
	if pgid <= 1 || input == nil {
		return false
	}
	want, ok := inputIdentity(input)
	if !ok {
		return false
	}
	members, tree := descendants(pgid)
	if !tree { // no /proc/PID/task/TID/children: look at every process
		for _, pid := range pids() {
			members = append(members, member{pid: pid})
		}
	}
	for _, m := range members {
		if !tree { // every process of the machine: only those of the command
			if st, ok := readStat(m.pid); !ok || st.pgrp != pgid && st.session != pgid {
				continue
			}
		}
		// Its state is read only once a thread is seen in a call that waits
		// on input, which most looks never see (a shell in wait4, a sleep).
		if taskWaiting(m, want) && sleeping(m.pid) {
			return true
		}
	}
	return false
}

// sleeping reports whether pid sleeps (interruptibly) and is not exiting:
// running, stopped or in uninterruptible sleep, it does not wait for a
// reader's input, whatever call its threads are in.
func sleeping(pid int) bool {
	st, ok := readStat(pid)
	return ok && !st.dead() && st.state == 'S'
}

// A member is a process of a command's tree and, when known, its threads.
type member struct {
	pid  int
	tids []string
}

// maxDescendants bounds the processes descendants lists.
const maxDescendants = 4096

// descendants returns pid and every process below it, from the kernel's lists
// of children: a few files for a command's tree, where a scan of /proc reads
// every process on the machine (which a session's calls, each looking every
// 100 ms, would pay many times over). ok is false where the kernel keeps no
// such lists (CONFIG_PROC_CHILDREN). Every running call looks this often, so
// the files are read with bare system calls (see readProcFile), and each
// process's threads are listed once, for the children and the syscalls.
func descendants(pid int) (all []member, ok bool) {
	buf := procBufs.Get().(*[]byte)
	defer procBufs.Put(buf)
	queue := []int{pid}
	for len(queue) > 0 && len(all) < maxDescendants {
		p := queue[0]
		queue = queue[1:]
		dir := "/proc/" + strconv.Itoa(p) + "/task"
		tids, err := threads(p, dir, *buf)
		if err != nil {
			if p == pid {
				return nil, true // gone: nothing waits
			}
			continue
		}
		all = append(all, member{pid: p, tids: tids})
		for _, t := range tids {
			b, err := procfs.Read(dir+"/"+t+"/children", buf, true)
			if err != nil {
				if err == unix.ENOENT && p == pid {
					return nil, false
				}
				continue
			}
			for f := range strings.FieldsSeq(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					queue = append(queue, c)
				}
			}
		}
	}
	return all, true
}

// threads lists the threads of process pid, whose task directory is dir. A
// task directory's link count is 2 and one per thread: a process of one
// thread, as most of a command's are, is known from one stat instead of a
// listing.
func threads(pid int, dir string, buf []byte) ([]string, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return nil, err
	}
	if st.Nlink == 3 {
		return []string{strconv.Itoa(pid)}, nil
	}
	return dirNames(dir, buf)
}

// procBufs are buffers for readProcFile and dirNames.
var procBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// dirNames lists a /proc directory's entries (but . and ..), using buf's
// capacity for the reads.
func dirNames(dir string, buf []byte) ([]string, error) {
	buf = buf[:cap(buf)]
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var names []string
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
		if n < len(buf)-procfs.Short {
			// procfs fills the buffer until an entry no longer fits: with
			// room left, that was the last (saves a call on every look).
			return names, nil
		}
	}
}

// fileID is a file's identity: device and inode.
type fileID struct{ dev, ino uint64 }

// inputIdentity returns the identity of the file the command reads: for a pipe
// either end (they share an inode), for a pty master its slave.
func inputIdentity(f *os.File) (fileID, bool) {
	var id fileID
	ok := false
	raw, err := f.SyscallConn()
	if err != nil {
		return id, false
	}
	raw.Control(func(fd uintptr) {
		// TIOCGPTPEER opens the slave of a master (Linux 4.13+); on anything
		// else it fails and the file itself is what is read.
		if peer, err := unix.IoctlRetInt(int(fd), unix.TIOCGPTPEER); err == nil {
			fd = uintptr(peer)
			defer unix.Close(peer)
		}
		var st unix.Stat_t
		if unix.Fstat(int(fd), &st) == nil {
			id, ok = fileID{uint64(st.Dev), st.Ino}, true
		}
	})
	return id, ok
}

// taskWaiting reports whether a thread of m is blocked reading want.
func taskWaiting(m member, want fileID) bool {
	buf := procBufs.Get().(*[]byte)
	defer procBufs.Put(buf)
	dir := "/proc/" + strconv.Itoa(m.pid) + "/task"
	tids := m.tids
	if tids == nil {
		var err error
		if tids, err = dirNames(dir, *buf); err != nil {
			return false
		}
	}
	for _, tid := range tids {
		b, err := procfs.Read(dir+"/"+tid+"/syscall", buf, true)
		if err != nil {
			continue
		}
		nr, args, ok := parseSyscall(b)
		if ok && callWaitsOn(m.pid, nr, args, want) {
			return true
		}
	}
	return false
}

// parseSyscall parses /proc/PID/syscall: "nr arg0 … arg5 sp pc" in a system
// call, "running" or "-1 sp pc" otherwise.
func parseSyscall(b []byte) (nr int, args [6]uint64, ok bool) {
	f := strings.Fields(string(b))
	if len(f) < 7 {
		return 0, args, false
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 0 {
		return 0, args, false
	}
	for i := range args {
		v, err := strconv.ParseUint(strings.TrimPrefix(f[i+1], "0x"), 16, 64)
		if err != nil {
			return 0, args, false
		}
		args[i] = v
	}
	return n, args, true
}

// How a blocking call names the files it waits to read.
const (
	callRead   = iota + 1 // arg0 is the fd
	callPoll              // arg0 points to struct pollfd[arg1]
	callSelect            // arg1 points to the read fd_set of arg0 fds
	callEpoll             // arg0 is an epoll fd, whose fdinfo lists its fds
)

// waitCalls are the calls present on every Linux architecture; waitCallsArch
// (per architecture) adds the older ones.
var waitCalls = map[int]int{
	unix.SYS_READ: callRead, unix.SYS_READV: callRead, unix.SYS_PREAD64: callRead,
	unix.SYS_PREADV: callRead, unix.SYS_PREADV2: callRead,
	unix.SYS_PPOLL:       callPoll,
	unix.SYS_PSELECT6:    callSelect,
	unix.SYS_EPOLL_PWAIT: callEpoll, unix.SYS_EPOLL_PWAIT2: callEpoll,
}

// pollRdNorm is POLLRDNORM, which x/sys/unix does not define on every architecture.
const pollRdNorm = 0x40

// maxWatched bounds how many fds of a poll or select are looked at.
const maxWatched = 4096

func callWaitsOn(pid, nr int, args [6]uint64, want fileID) bool {
	kind, ok := waitCalls[nr]
	if !ok {
		kind = waitCallsArch[nr]
	}
	switch kind {
	case callRead:
		return isFile(pid, int(args[0]), want)
	case callPoll:
		n := int(min(args[1], maxWatched))
		buf := make([]byte, 8*n) // struct pollfd { int fd; short events, revents; }
		if !readMem(pid, args[0], buf) {
			return false
		}
		for i := range n {
			fd := int32(binary.NativeEndian.Uint32(buf[8*i:]))
			events := binary.NativeEndian.Uint16(buf[8*i+4:])
			if fd >= 0 && events&(unix.POLLIN|pollRdNorm) != 0 && isFile(pid, int(fd), want) {
				return true
			}
		}
	case callSelect:
		n := int(min(args[0], maxWatched))
		if args[1] == 0 || n <= 0 {
			return false
		}
		words := make([]byte, 8*((n+63)/64)) // fd_set: an array of longs
		if !readMem(pid, args[1], words) {
			return false
		}
		for fd := range n {
			word := binary.NativeEndian.Uint64(words[8*(fd/64):])
			if word&(1<<(fd%64)) != 0 && isFile(pid, fd, want) {
				return true
			}
		}
	case callEpoll:
		return epollWatches(pid, int(args[0]), want)
	}
	return false
}

// isFile reports whether pid's fd is the file want.
func isFile(pid, fd int, want fileID) bool {
	var st unix.Stat_t
	if unix.Stat("/proc/"+strconv.Itoa(pid)+"/fd/"+strconv.Itoa(fd), &st) != nil {
		return false
	}
	return uint64(st.Dev) == want.dev && st.Ino == want.ino
}

// readMem reads pid's memory at addr.
func readMem(pid int, addr uint64, buf []byte) bool {
	if addr == 0 || addr > 1<<63 {
		return false
	}
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		return false
	}
	defer f.Close()
	n, err := f.ReadAt(buf, int64(addr))
	return err == nil && n == len(buf)
}

// epollWatches reports whether epoll fd epfd of pid waits for want to be
// readable; its fdinfo lists "tfd: FD events: MASK …" per watched fd.
func epollWatches(pid, epfd int, want fileID) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + strconv.Itoa(epfd))
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || f[0] != "tfd:" || f[2] != "events:" {
			continue
		}
		fd, err1 := strconv.Atoi(f[1])
		events, err2 := strconv.ParseUint(f[3], 16, 32)
		if err1 == nil && err2 == nil && events&unix.EPOLLIN != 0 && isFile(pid, fd, want) {
			return true
		}
	}
	return false
}
