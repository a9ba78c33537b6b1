// Package fsrules builds a sandbox session's Landlock ruleset: the whole
// view readable and executable, writable only the session's own paths and a
// few devices, for whatever ABI the kernel offers.
package fsrules

import (
	"errors"
	"fmt"
	"os"
	"slices"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Landlock access rights, as go-landlock groups them: what a read, a write
// and a file (not a directory) may be granted.
const (
	Read  = llsys.AccessFSExecute | llsys.AccessFSReadFile | llsys.AccessFSReadDir
	Write = llsys.AccessFSWriteFile | llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile | llsys.AccessFSMakeChar |
		llsys.AccessFSMakeDir | llsys.AccessFSMakeReg | llsys.AccessFSMakeSock | llsys.AccessFSMakeFifo |
		llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym | llsys.AccessFSTruncate
	File = llsys.AccessFSExecute | llsys.AccessFSWriteFile | llsys.AccessFSTruncate | llsys.AccessFSReadFile | llsys.AccessFSIoctlDev
)

// HandledFS are the file system rights each Landlock ABI handles, the low
// bits: 13 at ABI 1, then REFER (2), TRUNCATE (3), IOCTL_DEV (5) and
// RESOLVE_UNIX (9), which no rule grants: commands reach only the unix
// sockets bound in the session's domain (see unixgate).
func HandledFS(abi int) uint64 {
	return 1<<[...]int{13, 13, 14, 15, 15, 16, 16, 16, 16, 17}[min(max(abi, 0), 9)] - 1
}

// Build makes the session's Landlock ruleset — everything readable and
// executable, writable only the session's paths (writable: the view's
// writable mounts and files; /tmp and /dev/shm) and devices — for the
// kernel's ABI, best effort. It returns the ruleset's fd and the ABI.
func Build(writable, devices []string) (int, int, error) {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return -1, 0, fmt.Errorf("this kernel offers no Landlock (%s), so only the view's read-only mounts keep writes in the root", ErrnoName(err))
	}
	handled := HandledFS(abi)
	attr := llsys.RulesetAttr{HandledAccessFS: handled}
	if abi >= 6 {
		attr.Scoped = llsys.ScopeAbstractUnixSocket | llsys.ScopeSignal
	}
	fd, err := llsys.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, 0, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	dirs, files := []string{"/tmp", "/dev/shm"}, []string{}
	for _, p := range writable {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		} else if err == nil {
			files = append(files, p)
		}
	}
	rules := []struct {
		paths  []string
		access uint64
	}{
		{[]string{"/"}, Read},
		{dirs, Read | Write | llsys.AccessFSRefer},
		{files, (Read | Write) & File},
		{append(slices.Clone(devices), "/dev/ptmx"), (Read | Write | llsys.AccessFSIoctlDev) & File},
		{[]string{"/dev/pts"}, Read | Write | llsys.AccessFSIoctlDev},
	}
	for _, r := range rules {
		access := r.access & handled
		if access == 0 {
			continue
		}
		for _, p := range r.paths {
			if err := addRule(fd, p, access); err != nil && !errors.Is(err, unix.ENOENT) {
				unix.Close(fd)
				return -1, 0, fmt.Errorf("rule for %s: %w", p, err)
			}
		}
	}
	return fd, abi, nil
}

func addRule(ruleset int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return llsys.LandlockAddPathBeneathRule(ruleset, &llsys.PathBeneathAttr{ParentFd: fd, AllowedAccess: access}, 0)
}

// ErrnoName names the errno in err as C does ("ENOSYS"), for a report read by
// people who look it up; other errors as they are.
func ErrnoName(err error) string {
	var errno unix.Errno
	if errors.As(err, &errno) {
		if name := unix.ErrnoName(errno); name != "" {
			return name
		}
	}
	return err.Error()
}
