package mcpserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A clientProfile is how results are shaped for the client that connected, as
// its clientInfo.name at initialize names it. Each client shows its model a
// tool result its own way (measured in issue 21 with the real clients):
//
//   - Claude Code and Codex show the model JSON.stringify(structuredContent)
//     when there is one, instead of the text: 262 and 296 characters for
//     `echo hi` against the text's 80 and 113;
//   - Gemini CLI shows both channels on an error (895 against 440);
//   - other clients (opencode, Open WebUI, the Inspector, programs) show the
//     text and may read the fields: they keep structuredContent.
//
// For the first three the text alone is the fewest characters and loses
// nothing (the text is complete on its own), so they get text only, and their
// tools/list has no outputSchema, which would oblige every result to carry
// structuredContent (the TypeScript SDK that Claude Code and Gemini CLI use
// refuses a result without it).
type clientProfile struct {
	// Client is the client's name as the docs give it; "" for an unknown one.
	Client string
	// TextOnly leaves structuredContent and outputSchema out.
	TextOnly bool
}

// knownClients are matched by the prefix of clientInfo.name: "claude-code",
// "codex-mcp-client", "gemini-cli-mcp-client" (some Gemini CLI versions add
// the server's name after it).
var knownClients = []struct {
	prefix  string
	profile clientProfile
}{
	{"claude-code", clientProfile{Client: "Claude Code", TextOnly: true}},
	{"codex-mcp-client", clientProfile{Client: "Codex", TextOnly: true}},
	{"gemini-cli-mcp-client", clientProfile{Client: "Gemini CLI", TextOnly: true}},
}

// profileFor is the profile of a client by its clientInfo.name.
func profileFor(name string) clientProfile {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, k := range knownClients {
		if strings.HasPrefix(name, k.prefix) {
			return k.profile
		}
	}
	return clientProfile{}
}

// profile is the shape of results for ss's client, Options.TextOnly and
// Options.Structured overriding it.
func (s *Server) profile(ss *mcp.ServerSession) clientProfile {
	var p clientProfile
	if ss != nil {
		if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
			p = profileFor(ip.ClientInfo.Name)
		}
	}
	switch {
	case s.opts.TextOnly:
		p.TextOnly = true
	case s.opts.Structured:
		p.TextOnly = false
	}
	return p
}

// perClient adapts tools/list to the client that asks: no outputSchema for one
// that gets text only. The tools are copied; the server's own stay as they are.
func (s *Server) perClient(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		list, ok := res.(*mcp.ListToolsResult)
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if !ok || !s.profile(ss).TextOnly {
			return res, err
		}
		out := *list
		out.Tools = make([]*mcp.Tool, len(list.Tools))
		for i, t := range list.Tools {
			c := *t
			c.OutputSchema = nil
			out.Tools[i] = &c
		}
		return &out, nil
	}
}
