package mcpserver

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/output"
)

// progressTail is how much of the newest combined output a progress message shows.
const progressTail = 4 << 10

// progress turns a command's output into notifications/progress messages (seed 003:
// at most one per interval, with the newest output lines, or byte counts once the
// output is binary).
type progress struct {
	send     func(context.Context, *mcp.ProgressNotificationParams) error
	token    any
	interval time.Duration

	mu      sync.Mutex
	tail    []byte // newest combined output, at most 2*progressTail
	total   map[string]int64
	binary  bool
	dirty   bool
	stopped bool

	wake chan struct{} // output arrived
	quit chan struct{} // stop was called
	done chan struct{} // loop returned
}

// startProgress reports output for the request holding token until stop is called.
func startProgress(ctx context.Context, send func(context.Context, *mcp.ProgressNotificationParams) error, token any, interval time.Duration) *progress {
	p := &progress{
		send:     send,
		token:    token,
		interval: interval,
		total:    map[string]int64{},
		wake:     make(chan struct{}, 1),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go p.loop(ctx)
	return p
}

// add records output; it is called from the runner's pipe readers, so it only
// copies and signals, never sends.
func (p *progress) add(o shellgate.Output) {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.total[o.Stream] = o.Total
	if o.Binary {
		p.binary = true
		p.tail = nil
	} else if !p.binary {
		p.tail = append(p.tail, o.Data...)
		if len(p.tail) > 2*progressTail {
			p.tail = append(p.tail[:0], p.tail[len(p.tail)-progressTail:]...)
		}
	}
	p.dirty = true
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// stop ends reporting and waits for a notification being sent, so that none
// follows the tool result.
func (p *progress) stop() {
	p.mu.Lock()
	p.stopped = true
	p.mu.Unlock()
	close(p.quit)
	<-p.done
}

func (p *progress) loop(ctx context.Context) {
	defer close(p.done)
	var last time.Time
	for {
		select {
		case <-p.wake:
		case <-p.quit:
			return
		case <-ctx.Done():
			return
		}
		if wait := p.interval - time.Since(last); !last.IsZero() && wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-p.quit:
				t.Stop()
				return
			case <-ctx.Done():
				t.Stop()
				return
			}
		}
		params, ok := p.snapshot()
		if !ok {
			continue
		}
		last = time.Now()
		if err := p.send(ctx, params); err != nil && ctx.Err() != nil {
			return
		}
	}
}

// snapshot builds the next notification, if anything new arrived.
func (p *progress) snapshot() (*mcp.ProgressNotificationParams, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.dirty {
		return nil, false
	}
	p.dirty = false
	out, errOut := p.total["stdout"], p.total["stderr"]
	var msg string
	if p.binary {
		msg = fmt.Sprintf("[binary output: %d bytes stdout, %d bytes stderr]", out, errOut)
	} else {
		msg = newestLines(p.tail, progressTail)
	}
	return &mcp.ProgressNotificationParams{
		ProgressToken: p.token,
		Progress:      float64(out + errOut),
		Message:       msg,
	}, true
}

// newestLines returns the end of b, at most n bytes, starting at a line boundary
// when one is near and at a UTF-8 boundary always.
func newestLines(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	text, _ := output.Text(b) // no escape sequences for the client to render
	return text
}
