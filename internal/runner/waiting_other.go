//go:build !linux

package runner

import "os"

// WaitingForInput reports false: only Linux shows what a process is blocked on.
func WaitingForInput(pgid int, input *os.File) bool { return false }
