package checkpoint

import (
	"os"
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd when the thread that started it, and
// so shellgate, is gone: a background pack never outlives the process.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// afterStart: nothing more on Linux (see dieWithParent).
func afterStart(*os.Process) {}
