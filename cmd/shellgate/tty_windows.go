package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// openTTY returns the console's input for approval prompts, and stderr for the
// question, or nil when there is no console.
func openTTY() (io.ReadCloser, io.Writer) {
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return nil, nil
	}
	f, err := os.OpenFile("CONIN$", os.O_RDONLY, 0)
	if err != nil {
		return nil, nil
	}
	return f, os.Stderr
}
