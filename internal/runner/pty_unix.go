//go:build unix

package runner

import (
	"fmt"
	"os"

	"github.com/creack/pty"
)

// OpenTerminal opens a pseudo-terminal of cols×rows cells (0 or less: 80×24)
// for Spec.Terminal: the caller keeps master, reading the command's output from
// it and writing its input to it, and gives slave to Run.
func OpenTerminal(cols, rows int) (master, slave *os.File, err error) {
	if cols <= 0 {
		cols = 80
	}
	if rows <= 0 {
		rows = 24
	}
	if cols > 0xffff || rows > 0xffff {
		return nil, nil, fmt.Errorf("runner: terminal size %dx%d is too large", cols, rows)
	}
	master, slave, err = pty.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("runner: cannot open a pseudo-terminal: %w", err)
	}
	if err := pty.Setsize(master, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)}); err != nil {
		master.Close()
		slave.Close()
		return nil, nil, fmt.Errorf("runner: cannot size the pseudo-terminal: %w", err)
	}
	return master, slave, nil
}
