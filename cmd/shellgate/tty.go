package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// openTTY returns where to read approval answers and write the question, or nil when
// stdin is not a terminal (CI, pipes, MCP), in which case "ask" commands are refused.
func openTTY() (io.ReadCloser, io.Writer) {
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return nil, nil
	}
	return openConsole()
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
