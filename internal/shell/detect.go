package shell

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// ErrNoShell is returned by Detect when no usable shell program can be found.
var ErrNoShell = errors.New("no shell found")

// Detect chooses the shell program. A non-empty override is a path ("/bin/sh") or a
// name looked up in PATH ("zsh"); its kind follows from its base name. With no
// override the platform default is used: bash from PATH, else /bin/sh on Unix;
// pwsh.exe, else powershell.exe, else cmd.exe (%ComSpec%) on Windows.
func Detect(override string) (Shell, error) {
	if strings.TrimSpace(override) == "" {
		return detectDefault()
	}
	path, err := exec.LookPath(override)
	if err != nil {
		return Shell{}, fmt.Errorf("shell %q: %w", override, err)
	}
	return Shell{Path: path, Kind: KindOf(path)}, nil
}
