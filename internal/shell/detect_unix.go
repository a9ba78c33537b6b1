//go:build !windows

package shell

import (
	"fmt"
	"os/exec"
)

func detectDefault() (Shell, error) {
	if path, err := exec.LookPath("bash"); err == nil {
		return Shell{Path: path, Kind: Bash}, nil
	}
	for _, name := range []string{"/bin/sh", "sh"} {
		if path, err := exec.LookPath(name); err == nil {
			return Shell{Path: path, Kind: KindOf(path)}, nil
		}
	}
	return Shell{}, fmt.Errorf("%w: neither bash in PATH nor /bin/sh", ErrNoShell)
}
