// Package seccomp installs the filter a sandbox session's commands run under:
// it refuses what the mounts and the network namespace do not cover.
package seccomp

import (
	"errors"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// auditArch is the seccomp architecture of this build, 0 where the filter
// is not built for it.
var auditArch = map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]

// A modeCall is a system call that sets a file's mode, and which of its
// arguments is the mode.
type modeCall struct{ nr, arg uint32 }

// modeCalls set a file's mode: chmod and mknod exist on amd64 only (90 and
// 133 there); fchmodat2 is 452 on both.
var modeCalls = append(map[string][]modeCall{"amd64": {{90, 1}, {133, 1}}}[runtime.GOARCH],
	modeCall{unix.SYS_FCHMOD, 1}, modeCall{unix.SYS_FCHMODAT, 2}, modeCall{452, 2}, modeCall{unix.SYS_MKNODAT, 2})

// Install installs, on the calling thread and so on every command it
// forks, a seccomp filter that refuses what the mounts and the network
// namespace do not cover:
//   - vsock sockets (a VM's channel to its host, which no network namespace
//     separates) and io_uring (whose operations open sockets and files past
//     this filter);
//   - a set-user-ID or set-group-ID mode: a file in the root keeps its mode
//     on the host, where `cp /usr/bin/id t && chmod u+s t` would leave the
//     user's identity to anyone who runs it (writing a file clears the bits,
//     so only chmod and mknod can set them).
//
// Everything else is allowed; a system call of another architecture is
// refused.
func Install() error {
	if auditArch == 0 {
		return errors.New("no seccomp filter for " + runtime.GOARCH)
	}
	filter := socketsAndModes()
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	_, _, errno := unix.Syscall(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&prog)))
	runtime.KeepAlive(filter)
	if errno != 0 {
		return errno
	}
	return nil
}

// socketsAndModes is Install's program.
func socketsAndModes() []unix.SockFilter {
	const (
		ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
		and = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
		ret = unix.BPF_RET | unix.BPF_K
		// x32Bit marks the x32 ABI's system call numbers on amd64.
		x32Bit = 0x40000000
		// Offsets in struct seccomp_data: the low half of each argument.
		nrAt, archAt, argsAt = 0, 4, 16
		setID                = unix.S_ISUID | unix.S_ISGID
	)
	refuse := func(errno unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(errno) }
	// Jumps are written to labels and resolved below: a jump counts the
	// instructions it skips, forward only.
	type insn struct {
		unix.SockFilter
		jt, jf string
	}
	var prog []insn
	labels := map[string]int{}
	emit := func(code uint16, k uint32, jt, jf string) {
		prog = append(prog, insn{unix.SockFilter{Code: code, K: k}, jt, jf})
	}
	label := func(name string) { labels[name] = len(prog) }

	emit(ld, archAt, "", "")
	emit(jeq, auditArch, "", "enosys")
	emit(ld, nrAt, "", "")
	emit(jge, x32Bit, "enosys", "")
	emit(jeq, unix.SYS_IO_URING_SETUP, "eperm", "")
	emit(jeq, unix.SYS_SOCKET, "socket", "")
	for _, c := range modeCalls {
		emit(jeq, c.nr, "mode"+string(rune('0'+c.arg)), "")
	}
	emit(ret, unix.SECCOMP_RET_ALLOW, "", "")
	label("socket")
	emit(ld, argsAt, "", "")
	emit(jeq, unix.AF_VSOCK, "eafnosupport", "allow")
	for _, arg := range []uint32{1, 2} {
		label("mode" + string(rune('0'+arg)))
		emit(ld, argsAt+8*arg, "", "")
		emit(and, setID, "", "")
		emit(jeq, 0, "allow", "eperm")
	}
	label("allow")
	emit(ret, unix.SECCOMP_RET_ALLOW, "", "")
	label("eperm")
	emit(ret, refuse(unix.EPERM), "", "")
	label("eafnosupport")
	emit(ret, refuse(unix.EAFNOSUPPORT), "", "")
	label("enosys")
	emit(ret, refuse(unix.ENOSYS), "", "")

	out := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		jump := func(to string) uint8 {
			if to == "" {
				return 0
			}
			return uint8(labels[to] - i - 1)
		}
		in.Jt, in.Jf = jump(in.jt), jump(in.jf)
		out[i] = in.SockFilter
	}
	return out
}
