// Package mcpserver is shellgate's MCP face: it serves one shell tool (by default
// run_shell_command) over stdio or streamable HTTP with the official Go SDK, and maps
// MCP's progress notifications, cancellation and elicitation onto a shellgate.Gate.
//
// Every call returns the standard envelope as the tool result's structuredContent,
// with the envelope's text as the text content and isError set when the status is
// "error". Bad input, timeouts and refusals are tool results, never JSON-RPC errors.
package mcpserver
