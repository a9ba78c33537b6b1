package mcpserver

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/sandbox"
)

// Pruning never ends a session that is still connected, however sessions come
// and go beside it: it used to take its snapshot of the live sessions before
// reading the keys it holds, so a session that connected in between (its shell
// session made at initialize) was ended — ~1 % of sessions created in bursts.
func TestPruneKeepsNewSessions(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{Sandbox: shellgate.SandboxConfig{Mode: sandbox.Off}}, Options{})
	stop := make(chan struct{})
	pruned := make(chan struct{})
	go func() {
		defer close(pruned)
		for {
			select {
			case <-stop:
				return
			default:
				srv.pruneSessions()
			}
		}
	}()
	const sessions = 200
	var wg sync.WaitGroup
	ended := make(chan string, sessions)
	for range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ct, st := mcp.NewInMemoryTransports()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ctx, st) }()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "burst"}, nil).Connect(context.Background(), ct, nil)
			if err != nil {
				ended <- err.Error()
				return
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: DefaultToolName, Arguments: args("command", "true")})
			switch {
			case err != nil:
				ended <- err.Error()
			case res.IsError:
				ended <- res.Content[0].(*mcp.TextContent).Text
			}
			cs.Close()
			<-served
		}()
	}
	wg.Wait()
	close(stop)
	<-pruned
	close(ended)
	n := 0
	for msg := range ended {
		if n++; n <= 3 {
			t.Errorf("a connected session's call failed: %s", strings.SplitN(msg, "\n", 3)[:2])
		}
	}
	if n > 0 {
		t.Errorf("%d of %d sessions failed", n, sessions)
	}
}
