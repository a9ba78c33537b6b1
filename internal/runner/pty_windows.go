package runner

import "os"

// OpenTerminal fails on Windows: terminal jobs would need ConPTY, which is
// future work.
func OpenTerminal(cols, rows int) (master, slave *os.File, err error) {
	return nil, nil, ErrNoTerminal
}
