//go:build shellgate_nomcp

package main

import (
	"fmt"
	"io"
)

// cmdMCP in a build without the MCP server: `go build -tags shellgate_nomcp` leaves
// out the MCP SDK and the HTTP stack, which every start of the binary would
// otherwise initialise, for a shellgate used as a hook, a prefix or a CLI. See
// docs/benchmarks.md.
func cmdMCP(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "shellgate mcp: this shellgate was built without the MCP server (-tags shellgate_nomcp); build it without that tag to serve MCP")
	return exitUsage
}
