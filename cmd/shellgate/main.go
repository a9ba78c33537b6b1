// Command shellgate runs AI agents' shell commands safely: it checks them against a
// policy, runs them confined to a project root, and reports a standard JSON envelope.
//
//	shellgate run   [flags] -- COMMAND   run a command, print its output and a summary
//	shellgate check [flags] -- COMMAND   show the policy decision without running
//	shellgate mcp   [flags]              serve the shell tool over MCP (stdio or HTTP)
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit statuses of shellgate itself; otherwise `run` exits with the command's status.
const (
	exitTimeout   = 124 // the command timed out and was killed (as GNU timeout)
	exitShellgate = 125 // shellgate refused or could not run the command, or bad usage
	exitCancelled = 130 // interrupted (Ctrl-C)
)

const usage = `shellgate: the shell-execution layer for AI coding agents.

Usage:
  shellgate run   [flags] -- COMMAND   check, run and report a command
  shellgate check [flags] -- COMMAND   show the policy decision without running it
  shellgate mcp   [flags]              serve the shell tool over MCP (stdio, or --http ADDR)
  shellgate help  COMMAND              show a command's flags

Run "shellgate run -h" for flags and exit statuses.
`

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	cmds := map[string]func([]string, io.Writer, io.Writer) int{
		"run":   cmdRun,
		"check": cmdCheck,
		"mcp":   cmdMCP,
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitShellgate
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "help":
		if len(args) > 1 && cmds[args[1]] != nil {
			return cmds[args[1]]([]string{"-h"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	}
	cmd, ok := cmds[name]
	if !ok {
		fmt.Fprintf(stderr, "shellgate: unknown command %q\n\n%s", name, usage)
		return exitShellgate
	}
	return cmd(args[1:], stdout, stderr)
}
