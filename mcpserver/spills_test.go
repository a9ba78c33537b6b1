package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
)

// A session's spill files go when it ends, unless the server keeps them.
func TestSpillFilesRemovedWithTheSession(t *testing.T) {
	lane.Live(t)
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

// Files of a session that ended unannounced (gone from the server's sessions) are
// removed at the next call of any session.
func TestSpillFilesOfVanishedSessions(t *testing.T) {
	lane.Live(t)
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	cs := connect(t, srv, nil, nil)
	orphan := filepath.Join(t.TempDir(), "0123456789abcdef0123456789abcdef.stdout.log")
	if err := os.WriteFile(orphan, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv.spills.add("a-session-that-timed-out", orphan)
	call(t, context.Background(), cs, &mcp.CallToolParams{Arguments: args("command", "true")})
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("the vanished session's file is still there: %v", err)
	}
}
