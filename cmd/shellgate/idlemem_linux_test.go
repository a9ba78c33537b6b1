package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/shellgate/shellgate/internal/textpages/textpagestest"
)

// A server left alone after a call gives back the pages of its executable
// it mapped in (and its helpers theirs, Gate.Idle) once quiet for idleFree:
// over stdio when nothing was read or written, over HTTP when no request
// is in flight though the client keeps its event stream open.
func TestMCPGivesBackWhenQuiet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary, waits for the quiet spell")
	}
	bin := buildBinary(t)
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			var transport mcp.Transport
			cmd, _ := mcpCommand(t, bin)
			if mode == "http" {
				cmd, _ = mcpCommand(t, bin, "--http", "127.0.0.1:0", "--token-file", tokenFile(t, "t"))
				stderr, _ := cmd.StderrPipe()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				defer func() { cmd.Process.Kill(); cmd.Wait() }()
				transport = &mcp.StreamableClientTransport{Endpoint: serverURL(t, stderr), HTTPClient: &http.Client{Transport: bearer("t")}, MaxRetries: -1}
			} else {
				transport = &mcp.CommandTransport{Command: cmd}
			}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "quiet"}, nil).Connect(context.Background(), transport, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_shell_command", Arguments: map[string]any{"command": "echo hi"}}); err != nil {
				t.Fatal(err)
			}
			busy, err := textpagestest.ExeResidentKB(cmd.Process.Pid)
			if err != nil || busy == 0 {
				t.Fatalf("the server's executable after a call: %d kB, %v", busy, err)
			}
			var now int
			for deadline := time.Now().Add(idleFree + 10*time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
				if now, _ = textpagestest.ExeResidentKB(cmd.Process.Pid); now < busy/2 {
					return
				}
			}
			t.Errorf("the server's executable: %d kB mapped after a call, %d kB %s later", busy, now, idleFree+10*time.Second)
		})
	}
}
