package main

import (
	"io"
	"os"
)

// openConsole opens the console's input for the answer; the question goes to stderr,
// since CONIN$ cannot be written.
func openConsole() (io.ReadCloser, io.Writer) {
	f, err := os.OpenFile("CONIN$", os.O_RDONLY, 0)
	if err != nil {
		return nil, nil
	}
	return f, os.Stderr
}
