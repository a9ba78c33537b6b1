package shellgate

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/shellgate/shellgate/internal/audit"
	"github.com/shellgate/shellgate/internal/cachestore"
)

// cacheStore is where the projects' copies of the tool caches are kept (see
// internal/cachestore), beside the audit log; "" where there is no home.
func cacheStore() string {
	log, err := audit.DefaultPath()
	if err != nil {
		return ""
	}
	return filepath.Join(filepath.Dir(log), "caches")
}

// gateCaches holds this Gate's project directory in the cache store while
// its sandbox sessions may use it, so that no sweep removes it meanwhile.
type gateCaches struct {
	mu      sync.Mutex
	project *cachestore.Project
	// stopSweep stops the store's sweep, and swept is closed once it has.
	stopSweep context.CancelFunc
	swept     chan struct{}
}

// hold opens the project's directory in the store once: the sessions'
// overlays keep their upper layers there.
func (c *gateCaches) hold(store, root string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.project != nil || store == "" {
		return nil
	}
	p, err := cachestore.Open(store, root)
	c.project = p
	if c.swept == nil {
		// The copies no project needs any more (its root gone, unused for a
		// month), looked for once a day, beside the session's start and its
		// commands, not before them: removing a copy of a Go module cache
		// takes longer than the command. Close stops it; the next Gate
		// goes on.
		ctx, stop := context.WithCancel(context.Background())
		c.stopSweep, c.swept = stop, make(chan struct{})
		go func(done chan struct{}) {
			defer close(done)
			cachestore.SweepIfDue(ctx, store, cachestore.MaxUnused)
		}(c.swept)
	}
	return err
}

func (c *gateCaches) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.swept != nil {
		c.stopSweep()
		<-c.swept
	}
	c.project.Close()
	c.project = nil
}
