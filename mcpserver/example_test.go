package mcpserver_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/mcpserver"
)

// A Gate served over MCP. Here the client is in the same process; a real server
// uses &mcp.StdioTransport{} (as `shellgate mcp` does) or Server.ServeListener for
// streamable HTTP.
func Example() {
	root, err := os.MkdirTemp("", "project")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	gate, err := shellgate.New(shellgate.Config{Root: root})
	if err != nil {
		log.Fatal(err)
	}
	defer gate.Close() // last: kills whatever commands left in the background
	srv, err := mcpserver.New(gate, mcpserver.Options{ToolName: "Bash"})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	serverSide, clientSide := mcp.NewInMemoryTransports()
	go srv.Serve(context.Background(), serverSide)

	client := mcp.NewClient(&mcp.Implementation{Name: "agent"}, nil)
	cs, err := client.Connect(context.Background(), clientSide, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
		Name:      "Bash",
		Arguments: map[string]any{"command": "echo hi", "description": "say hi"},
	})
	if err != nil {
		log.Fatal(err)
	}
	env := res.StructuredContent.(map[string]any)
	fmt.Println(env["status"], res.IsError)
	fmt.Print(res.Content[0].(*mcp.TextContent).Text[:len("Command succeeded: echo hi")])
	// Output:
	// success false
	// Command succeeded: echo hi
}
