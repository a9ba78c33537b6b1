package main

import (
	"os"

	"golang.org/x/term"
)

// openTTY returns the console for approval prompts, or nil when there is none.
func openTTY() *os.File {
	if !term.IsTerminal(int(os.Stdin.Fd())) {
		return nil
	}
	f, err := os.OpenFile("CONIN$", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	return f
}
