// Package mcpserver is shellgate's MCP face: it serves one shell tool (by default
// run_shell_command) over stdio or streamable HTTP with the official Go SDK, and maps
// MCP's progress notifications, cancellation and elicitation onto a shellgate.Gate.
//
// Every call returns the envelope's text as the text content and, for clients
// that do not read it instead of the text, the envelope in brief as
// structuredContent; isError is set when the status is "error". Results are
// shaped, and output bounded, for the client that connected (clients.go). Bad
// input, timeouts and refusals are tool results, never JSON-RPC errors.
package mcpserver
