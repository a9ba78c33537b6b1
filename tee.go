package shellgate

import (
	"io"

	"github.com/shellgate/shellgate/output"
)

// teeWriter feeds a stream's capture and then the caller's live output callback.
type teeWriter struct {
	c      *output.Capture
	stream string
	fn     func(Output)
}

func tee(c *output.Capture, stream string, fn func(Output)) io.Writer {
	if fn == nil {
		return c
	}
	return &teeWriter{c: c, stream: stream, fn: fn}
}

func (t *teeWriter) Write(p []byte) (int, error) {
	n, err := t.c.Write(p)
	t.fn(Output{Stream: t.stream, Data: p, Total: t.c.Total(), Binary: t.c.Binary()})
	return n, err
}
