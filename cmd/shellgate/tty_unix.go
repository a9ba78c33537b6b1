//go:build !windows

package main

import (
	"io"
	"os"
)

// openConsole opens the controlling terminal for both the answer and the question.
func openConsole() (io.ReadCloser, io.Writer) {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, nil
	}
	return f, f
}
