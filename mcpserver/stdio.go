package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one inbound message, as the SDK's own transport does.
const maxLine = mcp.DefaultMaxLineLength

// StdioTransport serves newline-delimited JSON-RPC on in and out. Unlike a bare
// mcp.IOTransport, a malformed line does not end the session: it is answered with
// a JSON-RPC error (-32700 parse error, -32600 invalid request) and skipped, so one
// bad message from a client, or a typo by a person testing by hand, costs only
// that message.
//
// At stdin's EOF the requests already read are answered before the session
// ends, for up to eofGrace: a client that writes its requests and closes its
// end (a pipe, a person trying it by hand) gets its answers; a call still
// running after the grace is cancelled, as a client closing stdin to shut
// the server down expects.
func StdioTransport(in io.Reader, out io.Writer) mcp.Transport {
	open := &unanswered{ids: map[string]bool{}}
	w := &lockedWriter{w: out, open: open}
	return &mcp.IOTransport{
		Reader:        &lineGuard{in: bufio.NewReaderSize(in, 64<<10), src: in, out: w, open: open},
		Writer:        w,
		MaxLineLength: maxLine,
	}
}

// eofGrace bounds how long stdin's EOF waits for the answers to the requests
// read before it.
const eofGrace = time.Second

// unanswered are the ids of the requests passed to the SDK and not yet
// answered.
type unanswered struct {
	mu   sync.Mutex
	ids  map[string]bool
	none chan struct{} // closed when ids empties, while someone waits
}

func (u *unanswered) add(id json.RawMessage) {
	u.mu.Lock()
	u.ids[idKey(id)] = true
	u.mu.Unlock()
}

func (u *unanswered) answered(id json.RawMessage) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.ids, idKey(id))
	if len(u.ids) == 0 && u.none != nil {
		close(u.none)
		u.none = nil
	}
}

// wait returns once every request is answered, or after d.
func (u *unanswered) wait(d time.Duration) {
	u.mu.Lock()
	if len(u.ids) == 0 {
		u.mu.Unlock()
		return
	}
	if u.none == nil {
		u.none = make(chan struct{})
	}
	none := u.none
	u.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-none:
	case <-t.C:
	}
}

// idKey is an id as one spelling (1, 1.0 and 1e0 alike; a string unescaped).
func idKey(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// responseID is the id of a response message (one with a result or an
// error, not a method), read from its first keys only: the SDK writes the id
// before the result, which may be long.
func responseID(msg []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var id json.RawMessage
	response := false
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return nil, false
		}
		switch key {
		case "method":
			return nil, false
		case "result", "error":
			response = true
			if id != nil {
				return id, true
			}
		case "id":
			if dec.Decode(&id) != nil {
				return nil, false
			}
			if response {
				return id, true
			}
			continue
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil, false
		}
	}
	return nil, false
}

// lockedWriter makes each Write (the SDK writes one whole message per call) atomic
// with respect to the guard's own replies.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.Writer
	open *unanswered
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	l.mu.Unlock()
	if id, ok := responseID(p); ok {
		l.open.answered(id)
	}
	return n, err
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
	open    *unanswered
}

func (g *lineGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			if errors.Is(g.err, io.EOF) {
				g.open.wait(eofGrace)
			}
			return 0, g.err
		}
		line, err := g.readLine()
		g.err = err
		if line = bytes.TrimSpace(line); len(line) > 0 {
			reply, request := check(line)
			if reply != nil {
				g.out.Write(reply)
				continue
			}
			if request != nil {
				g.open.add(request)
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
// SDK can take, or nil and, for a request (a method and an id), its id.
func check(line []byte) (reply, request json.RawMessage) {
	if !json.Valid(line) {
		return errorReply(nil, -32700, "Parse error: the line is not valid JSON"), nil
	}
	if line[0] == '[' {
		return errorReply(nil, -32600, "Invalid Request: JSON-RPC batches are not supported; send one message per line"), nil
	}
	var m struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if line[0] != '{' || json.Unmarshal(line, &m) != nil {
		return errorReply(nil, -32600, "Invalid Request: a message is a JSON object"), nil
	}
	id := m.ID
	if len(id) > 0 && id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9') && string(id) != "null" {
		return errorReply(nil, -32600, "Invalid Request: id must be a string or a number"), nil
	}
	switch {
	case m.JSONRPC == nil || *m.JSONRPC != "2.0":
		return errorReply(id, -32600, `Invalid Request: "jsonrpc" must be "2.0"`), nil
	case len(m.Method) > 0 && m.Method[0] != '"':
		return errorReply(id, -32600, `Invalid Request: "method" must be a string`), nil
	case len(m.Method) == 0 && len(m.Result) == 0 && len(m.Error) == 0:
		return errorReply(id, -32600, `Invalid Request: a message needs a "method" (request or notification), or a "result" or "error" (response)`), nil
	}
	if len(m.Method) > 0 && len(id) > 0 && string(id) != "null" {
		return nil, id
	}
	return nil, nil
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
