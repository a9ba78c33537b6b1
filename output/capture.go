package output

import (
	"sync"
	"sync/atomic"
)

// DefaultLimit is the number of text bytes kept for the envelope when Options.Limit is 0.
const DefaultLimit = 50 * 1024

// DefaultSpillMax caps one spill file when Options.SpillMax is 0.
const DefaultSpillMax int64 = 1 << 30

// Options configure a Capture. The zero value uses every default.
type Options struct {
	Limit    int    // bytes of text kept in memory for the envelope, head+tail; 0 → DefaultLimit
	SpillDir string // directory for full-output files; "" → DefaultSpillDir()
	SpillMax int64  // cap on one spill file; 0 → DefaultSpillMax. Past it bytes are counted, not kept.
	Name     string // used in the spill file name, e.g. "stdout"
}

// Result is what a Capture holds once closed.
type Result struct {
	Text        string // all of it if Total <= Limit, else head + marker + tail; "" when Binary
	Total       int64  // every byte written
	Truncated   bool
	Binary      bool
	SpillPath   string // complete output file, "" if none was needed
	SpillCapped bool   // the spill file stopped at SpillMax
	SpillErr    error  // why the spill file could not be written, if it couldn't
}

// Capture is a bounded sink for one output stream.
type Capture struct {
	opts   Options
	total  atomic.Int64
	binary atomic.Bool

	mu     sync.Mutex
	buf    []byte
	closed bool
	result Result
}

// New returns a Capture configured by o.
func New(o Options) *Capture {
	if o.Limit <= 0 {
		o.Limit = DefaultLimit
	}
	if o.SpillMax <= 0 {
		o.SpillMax = DefaultSpillMax
	}
	return &Capture{opts: o}
}

// Write keeps what fits and always reports len(p), nil.
// TODO(output): head+tail, spill, binary detection — work in progress.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return len(p), nil
	}
	if room := c.opts.Limit - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	c.total.Add(int64(len(p)))
	return len(p), nil
}

// Total reports the bytes written so far. It is safe to call from any goroutine.
func (c *Capture) Total() int64 { return c.total.Load() }

// Binary reports whether the output looked binary so far. It is safe to call from any goroutine.
func (c *Capture) Binary() bool { return c.binary.Load() }

// Close finishes the capture and returns its Result. Calling it again returns the same Result.
func (c *Capture) Close() Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		total := c.total.Load()
		c.result = Result{Text: string(c.buf), Total: total, Truncated: total > int64(c.opts.Limit)}
	}
	return c.result
}
