//go:build linux

// Command without runs a program on a kernel that lacks some of what the
// sandbox uses, for the tests of its missing layers: a seccomp filter makes
// the kernel refuse those system calls, as it refuses them where they are
// missing for real, and the program inherits the filter.
//
//	without [-userns] [-landlock] [-seccomp] -- PROGRAM ARGS...
//
// -userns refuses user namespaces as Docker's default seccomp profile does:
// clone and unshare with a namespace flag fail with EPERM, clone3 with ENOSYS
// (a filter cannot read its flags). -landlock makes the Landlock calls fail
// with ENOSYS, as on a kernel built without it. -seccomp refuses new seccomp
// filters, as a kernel without CONFIG_SECCOMP_FILTER does: prctl with EINVAL,
// seccomp(2) with ENOSYS.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rule refuses system call nr with errno, when arg0 (its low 32 bits) is
// equal to eq, or has a bit of mask set; always when neither is given.
type rule struct {
	nr       uint32
	errno    unix.Errno
	eq, mask uint32
	hasEq    bool
}

const nsFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP

func main() {
	userns := flag.Bool("userns", false, "refuse namespaces, as Docker's default seccomp profile does")
	landlock := flag.Bool("landlock", false, "no Landlock system calls (ENOSYS)")
	seccomp := flag.Bool("seccomp", false, "no new seccomp filters")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: without [-userns] [-landlock] [-seccomp] -- PROGRAM ARGS...")
		os.Exit(64)
	}
	var rules []rule
	if *userns {
		rules = append(rules,
			rule{nr: unix.SYS_CLONE, errno: unix.EPERM, mask: nsFlags},
			rule{nr: unix.SYS_UNSHARE, errno: unix.EPERM, mask: nsFlags},
			rule{nr: unix.SYS_SETNS, errno: unix.EPERM},
			rule{nr: unix.SYS_CLONE3, errno: unix.ENOSYS})
	}
	if *landlock {
		rules = append(rules,
			rule{nr: unix.SYS_LANDLOCK_CREATE_RULESET, errno: unix.ENOSYS},
			rule{nr: unix.SYS_LANDLOCK_ADD_RULE, errno: unix.ENOSYS},
			rule{nr: unix.SYS_LANDLOCK_RESTRICT_SELF, errno: unix.ENOSYS})
	}
	if *seccomp {
		rules = append(rules,
			rule{nr: unix.SYS_PRCTL, errno: unix.EINVAL, eq: unix.PR_SET_SECCOMP, hasEq: true},
			rule{nr: unix.SYS_SECCOMP, errno: unix.ENOSYS})
	}
	path, err := exec.LookPath(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, "without:", err)
		os.Exit(127)
	}
	// The filter is the calling thread's: the exec must come from it.
	runtime.LockOSThread()
	if err := install(rules); err != nil {
		fmt.Fprintln(os.Stderr, "without: seccomp:", err)
		os.Exit(70)
	}
	err = syscall.Exec(path, flag.Args(), os.Environ())
	fmt.Fprintln(os.Stderr, "without:", err)
	os.Exit(126)
}

var auditArch = map[string]uint32{"amd64": unix.AUDIT_ARCH_X86_64, "arm64": unix.AUDIT_ARCH_AARCH64}[runtime.GOARCH]

// install puts the rules in a seccomp filter on the calling thread.
func install(rules []rule) error {
	if auditArch == 0 {
		return fmt.Errorf("no filter for %s", runtime.GOARCH)
	}
	const (
		ld   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq  = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jset = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
		ret  = unix.BPF_RET | unix.BPF_K
		// Offsets in struct seccomp_data; arg0's low half on little-endian.
		nrAt, archAt, arg0At = 0, 4, 16
	)
	allow := unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ALLOW}
	prog := []unix.SockFilter{
		{Code: ld, K: archAt},
		{Code: jeq, K: auditArch, Jt: 1}, // another architecture: allowed
		allow,
	}
	for _, r := range rules {
		refuse := unix.SockFilter{Code: ret, K: unix.SECCOMP_RET_ERRNO | uint32(r.errno)}
		switch {
		case r.hasEq:
			prog = append(prog, unix.SockFilter{Code: ld, K: nrAt}, unix.SockFilter{Code: jeq, K: r.nr, Jf: 3},
				unix.SockFilter{Code: ld, K: arg0At}, unix.SockFilter{Code: jeq, K: r.eq, Jf: 1}, refuse)
		case r.mask != 0:
			prog = append(prog, unix.SockFilter{Code: ld, K: nrAt}, unix.SockFilter{Code: jeq, K: r.nr, Jf: 3},
				unix.SockFilter{Code: ld, K: arg0At}, unix.SockFilter{Code: jset, K: r.mask, Jf: 1}, refuse)
		default:
			prog = append(prog, unix.SockFilter{Code: ld, K: nrAt}, unix.SockFilter{Code: jeq, K: r.nr, Jf: 1}, refuse)
		}
	}
	prog = append(prog, allow)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.Syscall(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return errno
	}
	return nil
}
