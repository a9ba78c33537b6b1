package shellgate

import (
	"io"

	"github.com/shellgate/shellgate/internal/output"
)

// teeWriter feeds a stream's capture and then the caller's live output
// callback, with the values of secrets replaced as in the capture.
type teeWriter struct {
	c      *output.Capture
	stream string
	fn     func(Output)
	red    *output.Redactor // nil: nothing to redact
}

func tee(c *output.Capture, stream string, fn func(Output), secrets map[string]string) io.Writer {
	if fn == nil {
		return c
	}
	return &teeWriter{c: c, stream: stream, fn: fn, red: output.NewRedactor(secrets)}
}

func (t *teeWriter) Write(p []byte) (int, error) {
	n, err := t.c.Write(p)
	shown := p
	if t.red != nil {
		shown = t.red.Feed(p) // a value cut by the chunk's end is held back for the next
	}
	t.fn(Output{Stream: t.stream, Data: shown, Total: t.c.Total(), Binary: t.c.Binary()})
	return n, err
}
