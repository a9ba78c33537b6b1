package fsrules

import (
	"testing"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// Each Landlock ABI's handled rights are the ones it added, by go-landlock's
// names; from ABI 9 RESOLVE_UNIX is handled and no rule of the ruleset
// grants it, so a command reaches only the unix sockets of its own domain.
func TestHandledFS(t *testing.T) {
	v1 := uint64(llsys.AccessFSExecute | llsys.AccessFSWriteFile | llsys.AccessFSReadFile | llsys.AccessFSReadDir |
		llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile | llsys.AccessFSMakeChar | llsys.AccessFSMakeDir |
		llsys.AccessFSMakeReg | llsys.AccessFSMakeSock | llsys.AccessFSMakeFifo | llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym)
	v2 := v1 | llsys.AccessFSRefer
	v3 := v2 | llsys.AccessFSTruncate
	v5 := v3 | llsys.AccessFSIoctlDev
	v9 := v5 | llsys.AccessFSResolveUnix
	for abi, want := range map[int]uint64{0: v1, 1: v1, 2: v2, 3: v3, 4: v3, 5: v5, 6: v5, 7: v5, 8: v5, 9: v9, 12: v9} {
		if got := HandledFS(abi); got != want {
			t.Errorf("HandledFS(%d) = %#x, want %#x", abi, got, want)
		}
	}
	for name, granted := range map[string]uint64{"read": Read, "write": Write, "file": File, "dirs": Read | Write | llsys.AccessFSRefer, "devices": Read | Write | llsys.AccessFSIoctlDev} {
		if granted&llsys.AccessFSResolveUnix != 0 {
			t.Errorf("the %s rule grants RESOLVE_UNIX: host sockets would be reachable under it", name)
		}
	}
}
