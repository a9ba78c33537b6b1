package mcpserver

import (
	"context"
	"os"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
)

// A session's spill files go when it ends, unless the server keeps them.
func TestSpillFilesRemovedWithTheSession(t *testing.T) {
	for _, keep := range []bool{false, true} {
		srv, _ := newServer(t, shellgate.Config{OutputLimit: 1000}, Options{KeepSpillFiles: keep})
		ct, st := mcp.NewInMemoryTransports()
		served := make(chan error, 1)
		go func() { served <- srv.Serve(context.Background(), st) }()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		env := call(t, context.Background(), cs, &mcp.CallToolParams{Arguments: args("command", "seq 1 100000; seq 1 100000 >&2")})
		if env.Data.FullOutputPath == nil {
			t.Fatalf("no spill file:\n%s", env.Text)
		}
		path := *env.Data.FullOutputPath
		if _, err := os.Stat(path); err != nil {
			t.Fatal(err)
		}
		cs.Close()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); os.IsNotExist(err) == keep {
			t.Errorf("keep %v: after the session, stat %s: %v", keep, path, err)
		}
	}
}
