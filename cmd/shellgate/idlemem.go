//go:build !shellgate_nomcp

package main

import (
	"io"
	"sync"
	"time"
)

// idleFree is how long a stdio server has read and written nothing (an HTTP
// one has had no request in flight: mcpserver.HTTPOptions.Quiet) before it
// gives the memory its calls freed back to the system. Longer than the gaps an
// agent leaves between calls (a call after a gap would fault the pages back
// in), short enough that a server left waiting holds only what it uses.
const idleFree = 5 * time.Second

// An idleTrim returns freed memory to the system once its server has been
// quiet for a while. With the server's GC setting (lessGC) the first
// collection waits for a 16 MiB heap (4 MiB × GOGC/100) and an idle server
// collects nothing: the handshake, the session's start and a first call left
// 3.5 of its 7 MB of private memory resident for as long as it waited
// (BenchmarkMCPIdleRSS).
type idleTrim struct {
	mu      sync.Mutex
	timer   *time.Timer
	after   time.Duration
	stopped bool
	done    chan struct{} // closed by stop: the trim's goroutine ends
}

// newIdleTrim calls free once nothing has touched the trim for after, and
// again after each later touch and quiet spell. free runs on one goroutine
// that lives as long as the trim, not on a new one each time: a goroutine's
// start and end look its function up in the binary's function table, which
// would map back pages of the executable that free has just given up
// (textpages.Drop).
func newIdleTrim(after time.Duration, free func()) *idleTrim {
	t := &idleTrim{after: after, timer: time.NewTimer(after), done: make(chan struct{})}
	t.timer.Stop() // armed by the first touch: a server that never hears from a client has nothing to free
	go func() {
		for {
			select {
			case <-t.timer.C:
				free()
			case <-t.done:
				return
			}
		}
	}()
	return t
}

// touch notes activity: the quiet spell starts again.
func (t *idleTrim) touch() {
	t.mu.Lock()
	if !t.stopped {
		t.timer.Reset(t.after)
	}
	t.mu.Unlock()
}

// stop disarms the trim for good: the server is ending.
func (t *idleTrim) stop() {
	t.mu.Lock()
	if !t.stopped {
		t.stopped = true
		t.timer.Stop()
		close(t.done)
	}
	t.mu.Unlock()
}

// reader and writer wrap the server's stdin and stdout: a request read or a
// reply written is activity. The reader closes what it wraps.
func (t *idleTrim) reader(r io.Reader) io.Reader { return trimReader{r, t} }
func (t *idleTrim) writer(w io.Writer) io.Writer { return trimWriter{w, t} }

type trimReader struct {
	r io.Reader
	t *idleTrim
}

func (r trimReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.t.touch()
	return n, err
}

// Close closes what it reads, if that can be closed: the transport closes
// stdin to end a read still waiting.
func (r trimReader) Close() error {
	if c, ok := r.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

type trimWriter struct {
	w io.Writer
	t *idleTrim
}

func (w trimWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.t.touch()
	return n, err
}
