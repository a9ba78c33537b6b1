package runner

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// bufSize is the read size. Large reads keep throughput high: a pipe holds up to
// 64 KiB by default (more where we could enlarge it), and each read empties it.
const bufSize = 256 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

// A pump copies one pipe to one writer from its own goroutine until EOF. It can be
// detached: from then on it keeps reading, so that a background process writing to
// the pipe neither blocks nor dies of SIGPIPE, but discards what it reads.
type pump struct {
	r    *os.File
	done chan struct{}

	mu       sync.Mutex // held while writing to w, so that detach waits for a write in flight
	w        io.Writer  // nil once detached
	writeErr error

	total   atomic.Int64  // bytes read so far
	reads   atomic.Uint64 // Read calls started; tells one long wait from many short ones
	reading atomic.Bool   // inside Read, i.e. waiting for a writer or about to get data
}

func startPump(r *os.File, w io.Writer) *pump {
	p := &pump{r: r, w: w, done: make(chan struct{})}
	go p.run()
	return p
}

func (p *pump) run() {
	defer close(p.done)
	defer p.r.Close()
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	enlarged := false
	for {
		p.reads.Add(1)
		p.reading.Store(true)
		n, err := p.r.Read(buf)
		p.reading.Store(false)
		if n > 0 {
			p.total.Add(int64(n))
			p.deliver(buf[:n])
		}
		if n >= 64<<10 && !enlarged {
			// A full default-size pipe: a fast writer. Only now is enlarging it
			// worth its cost, which every short command would otherwise pay.
			enlargePipe(p.r)
			enlarged = true
		}
		if err != nil {
			return
		}
	}
}

func (p *pump) deliver(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.w == nil || p.writeErr != nil {
		return
	}
	// A failing writer must not stop the reading, or the command would block on a
	// full pipe: keep reading and discard.
	_, p.writeErr = p.w.Write(b)
}

// detach stops delivery to the writer; once it returns the writer is not touched.
func (p *pump) detach() {
	p.mu.Lock()
	p.w = nil
	p.mu.Unlock()
}

// finished reports whether the pipe reached EOF (or was stopped).
func (p *pump) finished() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}
