package sandbox

import (
	"errors"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// auditArch is the seccomp architecture of this build, 0 where the filter
// is not built for it.
var auditArch = map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]

// denySockets installs, on the calling thread and so on every command it
// forks, a seccomp filter that refuses what the mounts and the network
// namespace do not cover: vsock sockets (a VM's channel to its host, which no
// network namespace separates) and io_uring (whose operations open sockets
// and files past this filter). Everything else is allowed; a system call of
// another architecture is refused.
func denySockets() error {
	if auditArch == 0 {
		return errors.New("no seccomp filter for " + runtime.GOARCH)
	}
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
		// x32Bit marks the x32 ABI's system call numbers on amd64.
		x32Bit = 0x40000000
		// Offsets in struct seccomp_data.
		nrAt, archAt, arg0At = 0, 4, 16
	)
	refuse := func(errno unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(errno) }
	// Jumps count the instructions skipped, forward only.
	filter := []unix.SockFilter{
		/* 0 */ {Code: ld, K: archAt},
		/* 1 */ {Code: jeq, K: auditArch, Jf: 9}, // another architecture → 11
		/* 2 */ {Code: ld, K: nrAt},
		/* 3 */ {Code: jge, K: x32Bit, Jt: 7}, // the x32 ABI's numbers → 11
		/* 4 */ {Code: jeq, K: unix.SYS_IO_URING_SETUP, Jt: 4}, // → 9
		/* 5 */ {Code: jeq, K: unix.SYS_SOCKET, Jf: 2}, // not socket → 8
		/* 6 */ {Code: ld, K: arg0At},
		/* 7 */ {Code: jeq, K: unix.AF_VSOCK, Jt: 2}, // → 10
		/* 8 */ {Code: ret, K: unix.SECCOMP_RET_ALLOW},
		/* 9 */ {Code: ret, K: refuse(unix.EPERM)},
		/* 10 */ {Code: ret, K: refuse(unix.EAFNOSUPPORT)},
		/* 11 */ {Code: ret, K: refuse(unix.ENOSYS)},
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, errno := unix.Syscall(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return errno
	}
	return nil
}
