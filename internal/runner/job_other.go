//go:build !windows

package runner

import "os/exec"

// adopt returns the started command: elsewhere than on Windows its process
// group is what holds it and its descendants.
func adopt(cmd *exec.Cmd, _ uintptr) (Launched, error) { return child{cmd}, nil }
