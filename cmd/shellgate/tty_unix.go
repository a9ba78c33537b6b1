//go:build !windows

package main

import (
	"os"

	"golang.org/x/term"
)

// openTTY returns the controlling terminal for approval prompts, or nil when there is
// none (CI, pipes, MCP), in which case "ask" commands are refused.
func openTTY() *os.File {
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return nil
	}
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	return f
}
