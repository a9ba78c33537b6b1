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

// openCalls can write an existing file by its path, with the argument
// holding their flags, 0 for those that always may (creat and truncate) or
// whose flags the filter cannot read (openat2). open and creat exist on
// amd64 only (2 and 85 there); openat2 is 437 on both.
var openCalls = append(map[string][]modeCall{"amd64": {{2, 1}, {85, 0}}}[runtime.GOARCH],
	modeCall{unix.SYS_OPENAT, 2}, modeCall{437, 0}, modeCall{unix.SYS_TRUNCATE, 0})

// metaCalls change a file's mode, times or extended attributes, which all
// its names share: chmod, utime, utimes and futimesat exist on amd64 only
// (90, 132, 235 and 261 there); fchmodat2 is 452 on both.
var metaCalls = append(map[string][]uint32{"amd64": {90, 132, 235, 261}}[runtime.GOARCH], unix.SYS_FCHMOD, unix.SYS_FCHMODAT, 452,
	unix.SYS_SETXATTR, unix.SYS_LSETXATTR, unix.SYS_FSETXATTR, unix.SYS_REMOVEXATTR, unix.SYS_LREMOVEXATTR, unix.SYS_FREMOVEXATTR,
	unix.SYS_UTIMENSAT)

// xattrAtCalls are setxattrat and removexattrat (463 and 466 on both, Linux
// 6.13): refused with ENOSYS, as an older kernel would, since their
// arguments lie in memory; libc's setxattr does not use them.
var xattrAtCalls = []uint32{463, 466}

// inodeIoctls change what every name of a file shares and neither a mode
// nor the copy-up covers: its flags (`chattr +d`, +S, +A …), its version
// (generation) and its fs-verity state (read-only for good). Through a
// read-only descriptor, on a file in the root hard-linked to a package
// store's, they change the store's file. The encodings are amd64's and
// arm64's, with the 32-bit SETFLAGS and SETVERSION that 64-bit kernels take
// too.
var inodeIoctls = []uint32{
	0x40086602, 0x40046602, // FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS
	0x40087602, 0x40047602, // FS_IOC_SETVERSION, FS_IOC32_SETVERSION
	0x401c5820, // FS_IOC_FSSETXATTR
	0x40806685, // FS_IOC_ENABLE_VERITY
}

// Install installs, on the calling thread and so on every command it
// forks, a seccomp filter that refuses what the mounts and the network
// namespace do not cover:
//   - vsock sockets (a VM's channel to its host, which no network namespace
//     separates) and io_uring (whose operations open sockets and files past
//     this filter);
//   - a set-user-ID or set-group-ID mode: a file in the root keeps its mode
//     on the host, where `cp /usr/bin/id t && chmod u+s t` would leave the
//     user's identity to anyone who runs it (writing a file clears the bits,
//     so only chmod and mknod can set them);
//   - the ioctls that set an inode's flags, version or fs-verity
//     (inodeIoctls), with EPERM: no build sets them;
//   - the kernel's keyrings (add_key, request_key, keyctl), with ENOSYS, as
//     a kernel without them: keys are found by the number /proc/keys
//     lists and checked against the user's host uid, which the session's
//     shares, so a session keyring of its own (joined before this filter)
//     does not keep a command from reading or revoking a key the user's
//     other programs made readable to the user.
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

// Calls says which system calls a notifying filter hands to its supervisor.
type Calls uint8

const (
	// UnixSends are the calls that can reach a unix socket by its path:
	// connect, sendto with an address, sendmsg and sendmmsg (whose address
	// lies in memory the filter cannot read).
	UnixSends Calls = 1 << iota
	// WriteOpens are the calls that can write an existing file by its path:
	// open, openat and creat with write access or O_TRUNC, unless O_CREAT
	// and O_EXCL make a new file; openat2, whose flags lie in memory; and
	// truncate; and those that change a file's mode (chmod, fchmod,
	// fchmodat, fchmodat2), times (utimensat, utime, utimes, futimesat) or
	// extended attributes (setxattr, removexattr and their l and f forms;
	// setxattrat and removexattrat fail with ENOSYS).
	// Landlock's calls fail with ENOSYS, as on a kernel without it: the
	// supervisor performs these calls under the session's domain, and could
	// not keep one a command added for itself.
	WriteOpens
	// Creations are the calls that make a name in a directory: mkdir,
	// mknod, symlink, link and rename in all their forms, and every open
	// with O_CREAT (with O_EXCL or without write access too); and umask,
	// which the supervisor lets go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE)
	// once it has forgotten the umasks it keeps for the names it makes.
	// Only with WriteOpens.
	Creations
)

// createCalls make a name in a directory: mkdir, mknod, symlink, link and
// rename exist on amd64 only (83, 133, 88, 86 and 82 there).
var createCalls = append(map[string][]uint32{"amd64": {83, 133, 88, 86, 82}}[runtime.GOARCH],
	unix.SYS_MKDIRAT, unix.SYS_MKNODAT, unix.SYS_SYMLINKAT, unix.SYS_LINKAT, unix.SYS_RENAMEAT, unix.SYS_RENAMEAT2)

// InstallNotify installs, on the calling thread and so on every command it
// forks, a second filter that hands calls to a supervisor, and returns the
// listener the supervisor reads them from (SECCOMP_FILTER_FLAG_NEW_LISTENER).
// Everything else is allowed.
func InstallNotify(calls Calls) (listener int, err error) {
	if auditArch == 0 {
		return -1, errors.New("no seccomp filter for " + runtime.GOARCH)
	}
	filter := notified(calls)
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	// Once the supervisor holds a call, only a fatal signal ends the
	// caller's wait: a call restarted after a signal would be done twice (a
	// datagram sent again, stream data repeated). Kernels before 5.19 lack it.
	var fd uintptr
	var errno unix.Errno
	for _, flags := range []uintptr{unix.SECCOMP_FILTER_FLAG_NEW_LISTENER | unix.SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER} {
		if fd, _, errno = unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&prog))); errno != unix.EINVAL {
			break
		}
	}
	runtime.KeepAlive(filter)
	if errno != 0 {
		return -1, errno
	}
	unix.CloseOnExec(int(fd))
	return int(fd), nil
}

// BPF instructions, and the offsets in struct seccomp_data: the low half of
// each argument.
const (
	ld  = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	jeq = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	jge = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	and = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	ret = unix.BPF_RET | unix.BPF_K
	// x32Bit marks the x32 ABI's system call numbers on amd64.
	x32Bit = 0x40000000

	nrAt, archAt, argsAt = 0, 4, 16
)

// An assembler writes a program whose jumps go to labels, resolved by
// program: a jump counts the instructions it skips, forward only.
type assembler struct {
	prog   []insn
	labels map[string]int
}

type insn struct {
	unix.SockFilter
	jt, jf string
}

func (a *assembler) emit(code uint16, k uint32, jt, jf string) {
	a.prog = append(a.prog, insn{unix.SockFilter{Code: code, K: k}, jt, jf})
}

func (a *assembler) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.prog)
}

func (a *assembler) program() []unix.SockFilter {
	out := make([]unix.SockFilter, len(a.prog))
	for i, in := range a.prog {
		jump := func(to string) uint8 {
			if to == "" {
				return 0
			}
			return uint8(a.labels[to] - i - 1)
		}
		in.Jt, in.Jf = jump(in.jt), jump(in.jf)
		out[i] = in.SockFilter
	}
	return out
}

// socketsAndModes is Install's program.
func socketsAndModes() []unix.SockFilter {
	const setID = unix.S_ISUID | unix.S_ISGID
	refuse := func(errno unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(errno) }
	var a assembler
	a.emit(ld, archAt, "", "")
	a.emit(jeq, auditArch, "", "enosys")
	a.emit(ld, nrAt, "", "")
	a.emit(jge, x32Bit, "enosys", "")
	a.emit(jeq, unix.SYS_IO_URING_SETUP, "eperm", "")
	a.emit(jeq, unix.SYS_SOCKET, "socket", "")
	a.emit(jeq, unix.SYS_IOCTL, "ioctl", "")
	for _, nr := range []uint32{unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_KEYCTL} {
		a.emit(jeq, nr, "enosys", "")
	}
	for _, c := range modeCalls {
		a.emit(jeq, c.nr, "mode"+string(rune('0'+c.arg)), "")
	}
	a.emit(ret, unix.SECCOMP_RET_ALLOW, "", "")
	a.label("socket")
	a.emit(ld, argsAt, "", "")
	a.emit(jeq, unix.AF_VSOCK, "eafnosupport", "allow")
	a.label("ioctl")
	a.emit(ld, argsAt+8, "", "") // the request: an unsigned int
	for _, cmd := range inodeIoctls {
		a.emit(jeq, cmd, "eperm", "")
	}
	a.emit(ret, unix.SECCOMP_RET_ALLOW, "", "")
	for _, arg := range []uint32{1, 2} {
		a.label("mode" + string(rune('0'+arg)))
		a.emit(ld, argsAt+8*arg, "", "")
		a.emit(and, setID, "", "")
		a.emit(jeq, 0, "allow", "eperm")
	}
	a.label("allow")
	a.emit(ret, unix.SECCOMP_RET_ALLOW, "", "")
	a.label("eperm")
	a.emit(ret, refuse(unix.EPERM), "", "")
	a.label("eafnosupport")
	a.emit(ret, refuse(unix.EAFNOSUPPORT), "", "")
	a.label("enosys")
	a.emit(ret, refuse(unix.ENOSYS), "", "")
	return a.program()
}

// notified is InstallNotify's program. Another architecture's calls and
// x32's are the first filter's to refuse; sendto without an address (send)
// cannot name a socket, and its arguments are the registers' copies, so it
// is allowed here.
func notified(calls Calls) []unix.SockFilter {
	var a assembler
	a.emit(ld, archAt, "", "")
	a.emit(jeq, auditArch, "", "allow")
	a.emit(ld, nrAt, "", "")
	a.emit(jge, x32Bit, "allow", "")
	if calls&UnixSends != 0 {
		a.emit(jeq, unix.SYS_CONNECT, "notify", "")
		a.emit(jeq, unix.SYS_SENDMSG, "notify", "")
		a.emit(jeq, unix.SYS_SENDMMSG, "notify", "")
		a.emit(jeq, unix.SYS_SENDTO, "sendto", "")
	}
	if calls&WriteOpens != 0 {
		for _, nr := range append([]uint32{unix.SYS_LANDLOCK_CREATE_RULESET, unix.SYS_LANDLOCK_ADD_RULE, unix.SYS_LANDLOCK_RESTRICT_SELF}, xattrAtCalls...) {
			a.emit(jeq, nr, "enosys", "")
		}
		for _, nr := range metaCalls {
			a.emit(jeq, nr, "notify", "")
		}
		if calls&Creations != 0 {
			for _, nr := range append([]uint32{unix.SYS_UMASK}, createCalls...) {
				a.emit(jeq, nr, "notify", "")
			}
		}
		for _, c := range openCalls {
			switch c.arg {
			case 0:
				a.emit(jeq, c.nr, "notify", "")
			default:
				a.emit(jeq, c.nr, "flags"+string(rune('0'+c.arg)), "")
			}
		}
	}
	a.emit(ret, unix.SECCOMP_RET_ALLOW, "", "")
	if calls&UnixSends != 0 {
		a.label("sendto")
		a.emit(ld, argsAt+8*4, "", "") // dest_addr, both halves
		a.emit(jeq, 0, "", "notify")
		a.emit(ld, argsAt+8*4+4, "", "")
		a.emit(jeq, 0, "allow", "notify")
	}
	if calls&WriteOpens != 0 {
		const writes, fresh = unix.O_WRONLY | unix.O_RDWR | unix.O_TRUNC, unix.O_CREAT | unix.O_EXCL
		for _, arg := range []uint32{1, 2} {
			a.label("flags" + string(rune('0'+arg)))
			a.emit(ld, argsAt+8*arg, "", "")
			if calls&Creations != 0 { // every O_CREAT: a name may be made
				a.emit(and, writes|unix.O_CREAT, "", "")
				a.emit(jeq, 0, "allow", "notify")
				continue
			}
			a.emit(and, writes, "", "")
			a.emit(jeq, 0, "allow", "")
			a.emit(ld, argsAt+8*arg, "", "")
			a.emit(and, fresh, "", "")
			a.emit(jeq, fresh, "allow", "notify")
		}
	}
	a.label("notify")
	a.emit(ret, unix.SECCOMP_RET_USER_NOTIF, "", "")
	a.label("allow")
	a.emit(ret, unix.SECCOMP_RET_ALLOW, "", "")
	a.label("enosys")
	a.emit(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS), "", "")
	return a.program()
}
