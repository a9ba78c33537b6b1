package shell

import (
	"fmt"
	"os"
	"os/exec"
)

func detectDefault() (Shell, error) {
	for _, name := range []string{"pwsh.exe", "powershell.exe"} {
		if path, err := exec.LookPath(name); err == nil {
			return Shell{Path: path, Kind: PowerShell}, nil
		}
	}
	candidates := []string{"cmd.exe"}
	if spec := os.Getenv("ComSpec"); spec != "" {
		candidates = append([]string{spec}, candidates...)
	}
	for _, name := range candidates {
		if path, err := exec.LookPath(name); err == nil {
			return Shell{Path: path, Kind: Cmd}, nil
		}
	}
	return Shell{}, fmt.Errorf("%w: no pwsh.exe, powershell.exe or cmd.exe (%%ComSpec%%)", ErrNoShell)
}
