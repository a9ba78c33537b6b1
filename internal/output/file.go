package output

import "os"

// CreateFile creates a new file for a command's complete output in dir, named
// and protected like a spill file (<dir>/<random-id>.<name>.log, mode 0600), for
// callers that keep all of an output themselves: the logs of background jobs.
func CreateFile(dir, name string) (*os.File, error) { return createSpill(dir, name) }

// Text is output bytes as the model reads them: valid UTF-8, carriage returns
// and backspaces applied, terminal control sequences removed (reported by
// controls).
func Text(b []byte) (text string, controls bool) { return sanitize(b) }

// A Redactor replaces the values of secrets in a stream written in pieces (see
// Options.Redact), for callers that keep a stream themselves.
type Redactor struct{ r *redactor }

// NewRedactor returns a Redactor for secrets (name → value); nil if none.
func NewRedactor(secrets map[string]string) *Redactor {
	if len(secrets) == 0 {
		return nil
	}
	return &Redactor{newRedactor(secrets)}
}

// Feed takes the next piece and returns what is settled, valid until the
// next call: a value may still be completed by the next piece.
func (r *Redactor) Feed(p []byte) []byte { return r.r.feed(p) }

// Flush returns the rest at the stream's end.
func (r *Redactor) Flush() []byte { return r.r.flush() }
