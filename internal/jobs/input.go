package jobs

import (
	"strings"

	"github.com/shellgate/shellgate/internal/terminal"
)

// Type sends text, then the named keys (see terminal.Keys), to the job's
// input as a person typing would. On a terminal a newline in text is Enter.
// A pipe has no line discipline, so Type does what a terminal would: Ctrl-D
// ends the input, Ctrl-C interrupts the job, and Enter is a newline.
func (j *Job) Type(text string, keys []string) error {
	tty := j.spec.TTY
	if text != "" {
		if tty {
			text = strings.ReplaceAll(text, "\n", "\r")
		}
		if err := j.Send([]byte(text)); err != nil {
			return err
		}
	}
	for _, k := range keys {
		b, err := terminal.Keys(k)
		if err != nil {
			return err
		}
		if !tty {
			switch string(b) {
			case "\x04": // Ctrl-D: end of input
				if err := j.CloseInput(); err != nil {
					return err
				}
				continue
			case "\x03": // Ctrl-C: interrupt
				if err := j.Interrupt(); err != nil {
					return err
				}
				continue
			case "\r": // Enter ends a line
				b = []byte("\n")
			}
		}
		if err := j.Send(b); err != nil {
			return err
		}
	}
	return nil
}
