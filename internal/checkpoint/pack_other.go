//go:build !linux && !windows

package checkpoint

import (
	"os"
	"os/exec"
)

// dieWithParent: elsewhere (macOS, the BSDs) the kernel has no
// parent-death signal; Close stops a background pack, and a shellgate
// killed outright (SIGKILL) leaves git to finish its pack, which then ends
// by itself: its work is a valid store either way.
func dieWithParent(*exec.Cmd) {}

func afterStart(*os.Process) {}
