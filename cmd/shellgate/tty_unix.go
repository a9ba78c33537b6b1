//go:build !windows

package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// openTTY returns the controlling terminal for approval prompts, or nil when there is
// none (CI, pipes, MCP), in which case "ask" commands are refused.
func openTTY() (io.ReadCloser, io.Writer) {
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return nil, nil
	}
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, nil
	}
	return f, f
}
