package sandbox

import (
	"os"
	"runtime"
	"strings"

	"github.com/shellgate/shellgate/internal/protect"
)

// QuarantineDir is where the sandbox moves protected paths that commands
// create, in the root.
const QuarantineDir = protect.QuarantineDir

// Here reports whether this package has a session for this system: Linux;
// macOS where sandbox-exec is; Windows (a job object, no more).
func Here() bool {
	switch runtime.GOOS {
	case "linux", "windows":
		return true
	case "darwin":
		_, err := os.Stat(SandboxExec)
		return err == nil
	}
	return false
}

// SessionTemp is the commands' TMPDIR in a Linux session: its own /tmp, or a
// directory in it when the project itself lies in /tmp, so that the policy,
// which lets commands write in the temp dir, still keeps them out of the
// root's parents.
func SessionTemp(root string) string {
	if root == "/tmp" || strings.HasPrefix(root, "/tmp/") {
		return "/tmp/shellgate-tmp"
	}
	return "/tmp"
}
