package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one inbound message, as the SDK's own transport does.
const maxLine = mcp.DefaultMaxLineLength

// StdioTransport serves newline-delimited JSON-RPC on in and out. Unlike a bare
// mcp.IOTransport, a malformed line does not end the session: it is answered with
// a JSON-RPC error (-32700 parse error, -32600 invalid request) and skipped, so one
// bad message from a client, or a typo by a person testing by hand, costs only
// that message.
func StdioTransport(in io.Reader, out io.Writer) mcp.Transport {
	w := &lockedWriter{w: out}
	return &mcp.IOTransport{
		Reader:        &lineGuard{in: bufio.NewReaderSize(in, 64<<10), src: in, out: w},
		Writer:        w,
		MaxLineLength: maxLine,
	}
}

// lockedWriter makes each Write (the SDK writes one whole message per call) atomic
// with respect to the guard's own replies.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close does not close the underlying writer: stdout belongs to the process.
func (l *lockedWriter) Close() error { return nil }

// lineGuard passes on well-formed JSON-RPC lines and answers the rest itself.
type lineGuard struct {
	in      *bufio.Reader
	src     io.Reader // closed with the guard, which unblocks a pending read
	out     io.Writer
	pending []byte // a checked line (with its newline) not yet read by the SDK
	err     error  // the input's error, returned once pending is drained
}

func (g *lineGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		line, err := g.readLine()
		g.err = err
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if reply := check(line); reply != nil {
				g.out.Write(reply)
				continue
			}
			g.pending = append(line, '\n')
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

func (g *lineGuard) Close() error {
	if c, ok := g.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// readLine returns the next line; a line over maxLine is answered and skipped.
func (g *lineGuard) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := g.in.ReadSlice('\n')
		if len(line)+len(chunk) > maxLine {
			line = nil
			g.out.Write(errorReply(nil, -32700, fmt.Sprintf("Parse error: message longer than %d bytes", maxLine)))
			for errors.Is(err, bufio.ErrBufferFull) { // skip the rest of the line
				_, err = g.in.ReadSlice('\n')
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// check returns the error reply for a line that is not a JSON-RPC 2.0 message the
// SDK can take, or nil.
func check(line []byte) []byte {
	if !json.Valid(line) {
		return errorReply(nil, -32700, "Parse error: the line is not valid JSON")
	}
	if line[0] == '[' {
		return errorReply(nil, -32600, "Invalid Request: JSON-RPC batches are not supported; send one message per line")
	}
	var m struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if line[0] != '{' || json.Unmarshal(line, &m) != nil {
		return errorReply(nil, -32600, "Invalid Request: a message is a JSON object")
	}
	id := m.ID
	if len(id) > 0 && id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') && string(id) != "null" {
		return errorReply(nil, -32600, "Invalid Request: id must be a string or a number")
	}
	switch {
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		return errorReply(id, -32600, `Invalid Request: "jsonrpc" must be "2.0"`)
	case len(m.Method) > 0 && m.Method[0] != '"':
		return errorReply(id, -32600, `Invalid Request: "method" must be a string`)
	case len(m.Method) == 0 && len(m.Result) == 0 && len(m.Error) == 0:
		return errorReply(id, -32600, `Invalid Request: a message needs a "method" (request or notification), or a "result" or "error" (response)`)
	}
	return nil
}

func errorReply(id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(b, '\n')
}
