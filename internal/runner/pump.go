package runner

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// bufSize is the read size once a command writes fast. Large reads keep
// throughput high: a pipe holds up to 64 KiB by default (more where we could
// enlarge it), and each read empties it.
const bufSize = 256 << 10

// firstBufSize is the read size a pump starts with: most commands write less,
// and a hundred commands at once would otherwise hold 50 MiB of buffers (a
// pool is emptied by the collector, so under load each pump allocated its
// 256 KiB anew). A read that fills it moves the pump to bufSize.
const firstBufSize = 16 << 10

var (
	bufPool      = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}
	firstBufPool = sync.Pool{New: func() any { b := make([]byte, firstBufSize); return &b }}
)

// A pump copies one pipe to one writer from its own goroutine until EOF. It can be
// detached: from then on it keeps reading, so that a background process writing to
// the pipe neither blocks nor dies of SIGPIPE, but discards what it reads.
type pump struct {
	r    *os.File
	done chan struct{}

	mu       sync.Mutex // held while writing to w, so that detach waits for a write in flight
	w        io.Writer  // nil once detached
	writeErr error

	total atomic.Int64 // bytes read so far
	// readFrom is when the pump began waiting for the Read in flight (ns
	// since epoch, monotonic): the first Read after the last data, not a
	// Read restarted after a nudge (settle, mark). 0 outside Read. A Read
	// that has waited long with the pipe empty tells a quiet pipe.
	readFrom atomic.Int64

	passed   chan struct{} // a token after each Read's data is delivered (settle)
	stopping atomic.Bool   // a read deadline means stop, not settle's nudge

	// marking: mark asked for where the pipe stands; marked gets it, from
	// between two Reads, where nothing read is still in hand.
	marking atomic.Bool
	marked  chan int64
}

// afterRead, if set (tests), runs between a Read's return and the pump's
// noting it: where a goroutine can wait for a thread or a P for milliseconds
// on a busy machine, its data in hand and its reading flag still set.
var afterRead atomic.Pointer[func(n int)]

// epoch is what readFrom counts from: time.Since reads the monotonic clock.
var epoch = time.Now()

// waitingSince reports whether the pump is inside a Read (waiting for a
// writer, or about to return data it got), and since when.
func (p *pump) waitingSince() (time.Time, bool) {
	ns := p.readFrom.Load()
	return epoch.Add(time.Duration(ns)), ns != 0
}

func startPump(r *os.File, w io.Writer) *pump {
	p := &pump{r: r, w: w, done: make(chan struct{}), passed: make(chan struct{}, 1), marked: make(chan int64, 1)}
	go p.run()
	return p
}

func (p *pump) run() {
	defer close(p.done)
	defer p.r.Close()
	pool := &firstBufPool
	bp := pool.Get().(*[]byte)
	defer func() { pool.Put(bp) }()
	buf := *bp
	enlarged := false
	var quietFrom time.Duration // since the last data: a nudge's empty Read goes on waiting
	for {
		if quietFrom == 0 {
			quietFrom = max(time.Since(epoch), 1)
		}
		p.readFrom.Store(int64(quietFrom))
		n, err := p.r.Read(buf)
		if f := afterRead.Load(); f != nil {
			(*f)(n)
		}
		p.readFrom.Store(0)
		if n > 0 {
			quietFrom = 0
			p.total.Add(int64(n))
			p.deliver(buf[:n])
		}
		if p.marking.CompareAndSwap(true, false) {
			p.marked <- p.total.Load() + int64(unread(p.r))
		}
		select { // for settle: whatever this Read got is delivered
		case p.passed <- struct{}{}:
		default:
		}
		if n == len(buf) && pool == &firstBufPool {
			// A full first buffer: more is coming. What it held is delivered.
			pool.Put(bp)
			pool, bp = &bufPool, bufPool.Get().(*[]byte)
			buf = *bp
		}
		if n >= 64<<10 && !enlarged {
			// A full default-size pipe: a fast writer. Only now is enlarging it
			// worth its cost, which every short command would otherwise pay.
			enlargePipe(p.r)
			enlarged = true
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && !p.stopping.Load() {
			p.r.SetReadDeadline(time.Time{}) // settle's nudge: read on
			continue
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

// settle makes sure that what the pump has read is delivered: a pump that
// looks idle — inside Read, nothing in the pipe — may be a goroutine that has
// the command's last output in hand and is still waiting to run. A read
// deadline of now ends a Read that is really waiting; settle waits for the
// Read in flight to end, its data delivered, at most wait. It reports
// whether it knows (false without read deadlines, on Windows' pipes).
func (p *pump) settle(wait time.Duration) bool {
	select {
	case <-p.passed: // a token from before: not the Read in flight
	default:
	}
	if p.r.SetReadDeadline(time.Now()) != nil {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-p.passed:
	case <-p.done:
	case <-t.C:
		return false
	}
	return true
}

// mark returns how many bytes the pump will have read once it has read
// everything in its pipe now (the total so far, what it has in hand, and
// what is unread), or -1 when it reaches EOF first or cannot say within
// wait. It nudges the Read in flight, as settle does.
func (p *pump) mark(wait time.Duration) int64 {
	p.marking.Store(true)
	if p.r.SetReadDeadline(time.Now()) != nil {
		p.marking.Store(false)
		return -1
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case n := <-p.marked:
		return n
	case <-p.done:
	case <-t.C:
	}
	return -1
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
