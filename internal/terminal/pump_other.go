//go:build !unix

package terminal

import (
	"io"
	"os"
)

// A Pump copies what a program writes to a pseudo-terminal from its master
// to a writer. Without Unix's poll it cannot look into the terminal, and
// reports it drained: there are no terminal jobs there anyway.
type Pump struct {
	master *os.File
	w      io.Writer
}

// NewPump returns a Pump from master to w; Run copies.
func NewPump(master *os.File, w io.Writer) *Pump {
	return &Pump{master: master, w: w}
}

// Run copies until the master fails or ends.
func (p *Pump) Run() error {
	_, err := io.Copy(p.w, p.master)
	return err
}

// Drained reports true.
func (p *Pump) Drained() bool { return true }
