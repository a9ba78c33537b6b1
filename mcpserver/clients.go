package mcpserver

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// A clientProfile is how results are shaped for the client that connected, as
// its clientInfo.name at initialize names it. Each client shows its model a
// tool result its own way (measured in issue 21 with the real clients, and
// read in each client's source, docs/mcp.md):
//
//   - Claude Code, Codex and VS Code show the model
//     JSON.stringify(structuredContent) when there is one, instead of the
//     text: 262 and 296 characters for `echo hi` against the text's 80 and 113;
//   - Cline shows the JSON of the whole result, both channels; Gemini CLI
//     shows both channels on an error (895 against 440);
//   - opencode, Zed, Continue, Goose and LibreChat show the text alone.
//
// For the first five the text alone is the fewest characters and loses
// nothing (the text is complete on its own), so they get text only, and their
// tools/list has no outputSchema, which would oblige every result to carry
// structuredContent (the TypeScript SDK that Claude Code and Gemini CLI use
// refuses a result without it). A client not named here keeps both channels
// for programs that read the fields, but structuredContent repeats at most
// unknownBriefOutput bytes of the text's output (briefOf): a client that
// shows its model both pays little for the copy, one that shows the text
// alone loses nothing, and one that shows structuredContent alone still
// reads how the command ended, and where the rest is.
type clientProfile struct {
	// Client is the client's name as the docs give it; "" for an unknown one.
	Client string
	// TextOnly leaves structuredContent and outputSchema out.
	TextOnly bool
	// BriefOutput, when > 0, is the most bytes of output structuredContent
	// repeats of the text's (briefOf); 0: all of it.
	BriefOutput int
	// Output is the most output a call returns, stdout and stderr together
	// (the default and the most max_output_bytes may ask), when the client
	// shows its model less than the Gate's own limits allow; 0: the Gate's.
	Output int
	// MaxText is the most characters of text a result may have; output is cut
	// further to fit (tail first kept) when the envelope's notes, a digest or
	// a long command push it over. 0: no bound but the message size.
	MaxText int
}

// Each client cuts a long tool result on its own before its model reads it
// (measured with the real clients, e2e/agents.test.mjs):
//
//   - Claude Code shows up to about 48 000 characters inline; a longer result
//     becomes a preview of its first 2 KB (48 140 characters reached the
//     model, 50 140 did not), losing the tail where errors are;
//   - Codex 0.171 keeps about 12 000 characters, its head and tail halves,
//     and drops the middle (11 524 reached its model whole, 12 017 were cut):
//     with stderr after a long stdout, stdout's end is lost;
//   - Gemini CLI 0.61 keeps the first 8 000 and the last 32 000 characters of
//     a result over 40 000 (its truncateToolOutputThreshold).
//
// So each one's results stay under its Text characters, the output under its
// Output bytes, which leaves room for the envelope's lines and a digest (20
// lines of at most 200 bytes); shellgate's own cut then keeps both streams'
// ends and names the file with the whole output.
const (
	claudeCodeText   = 40000
	claudeCodeOutput = 34000
	codexText        = 10000
	codexOutput      = 8000
	geminiText       = 38000
	geminiOutput     = 32000
)

// unknownBriefOutput is the most output a client not known here gets again in
// structuredContent: about a screen, more of its end than of its start, so
// that its model reads how a command ended in either channel, while a client
// that shows both pays 4 KB for the copy instead of the 50 KB output again.
const unknownBriefOutput = 4096

// knownClients are matched by the prefix of clientInfo.name: "claude-code",
// "codex-mcp-client", "gemini-cli-mcp-client" (some Gemini CLI versions add
// the server's name after it), VS Code's product name ("Visual Studio Code",
// "Visual Studio Code - Insiders": its mcpServerRequestHandler.ts sends
// productService.nameLong), Cline's extension ("Cline", McpHub.ts) and its
// SDK's default ("@cline/core").
var knownClients = []struct {
	prefix  string
	profile clientProfile
}{
	{"claude-code", clientProfile{Client: "Claude Code", TextOnly: true, Output: claudeCodeOutput, MaxText: claudeCodeText}},
	{"codex-mcp-client", clientProfile{Client: "Codex", TextOnly: true, Output: codexOutput, MaxText: codexText}},
	{"gemini-cli-mcp-client", clientProfile{Client: "Gemini CLI", TextOnly: true, Output: geminiOutput, MaxText: geminiText}},
	{"visual studio code", clientProfile{Client: "VS Code", TextOnly: true}},
	{"cline", clientProfile{Client: "Cline", TextOnly: true}},
	{"@cline/", clientProfile{Client: "Cline", TextOnly: true}},
}

// profileFor is the profile of a client by its clientInfo.name.
func profileFor(name string) clientProfile {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, k := range knownClients {
		if strings.HasPrefix(name, k.prefix) {
			return k.profile
		}
	}
	return clientProfile{BriefOutput: unknownBriefOutput}
}

// profile is the shape of results for ss's client, Options.TextOnly and
// Options.Structured (structuredContent whole, for every client) overriding it.
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
		p.TextOnly, p.BriefOutput = false, 0
	}
	return p
}

// profileKey carries a call's clientProfile in its context, for the job tools.
type profileKey struct{}

// profileOf is the clientProfile in ctx; the zero one when there is none.
func profileOf(ctx context.Context) clientProfile {
	p, _ := ctx.Value(profileKey{}).(clientProfile)
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
		p := s.profile(ss)
		if !ok || !p.TextOnly && p.Output == 0 {
			return res, err
		}
		out := *list
		out.Tools = make([]*mcp.Tool, len(list.Tools))
		for i, t := range list.Tools {
			c := *t
			if p.TextOnly {
				c.OutputSchema = nil
			}
			if schema, ok := c.InputSchema.(*jsonschema.Schema); ok && c.Name == JobOutputTool && p.Output > 0 {
				// Its default is the client's output limit too (jobs.go).
				in := *schema
				in.Properties = maps.Clone(in.Properties)
				if mob := in.Properties["max_output_bytes"]; mob != nil {
					m := *mob
					m.Description = jobOutputLimit(s.clientInfo(p).OutputLimit)
					in.Properties["max_output_bytes"] = &m
				}
				c.InputSchema = &in
			}
			if c.Name == s.opts.ToolName && p.Output > 0 {
				// The client's own output limits, in the description and the schema.
				info := s.clientInfo(p)
				d, err := describe(info)
				if err != nil {
					return nil, err
				}
				c.Description = d
				c.InputSchema = inputSchema(info.DefaultTimeout.Milliseconds(), info.MaxTimeout.Milliseconds(), info.OutputLimit, info.MaxOutputLimit)
			}
			out.Tools[i] = &c
		}
		return &out, nil
	}
}

// clientInfo is the Gate's Info with p's output limits.
func (s *Server) clientInfo(p clientProfile) shellgate.Info {
	info := s.info
	if p.Output > 0 {
		info.OutputLimit = min(info.OutputLimit, p.Output)
		info.MaxOutputLimit = min(info.MaxOutputLimit, p.Output)
	}
	return info
}

// budget applies p's output limits to a call: its default, and a cap on what
// max_output_bytes asks (more would not reach the model). It reports a cap.
func (s *Server) budget(p clientProfile, r *shellgate.Request) (capped int) {
	if p.Output == 0 {
		return 0
	}
	info := s.clientInfo(p)
	switch {
	case r.MaxOutputBytes == 0:
		r.MaxOutputBytes = info.OutputLimit
	case r.MaxOutputBytes > info.MaxOutputLimit:
		capped = r.MaxOutputBytes
		r.MaxOutputBytes = info.MaxOutputLimit
	}
	return capped
}

// fitText cuts env's output further until its text has at most maxText
// characters, keeping more of the tail, where errors are, than of the head.
func fitText(env *envelope.Envelope, maxText int, client string) {
	n := utf8.RuneCountInString(env.Text)
	if maxText <= 0 || n <= maxText {
		return
	}
	orig := *env
	out := len(orig.Data.Stdout) + len(orig.Data.Stderr)
	keep := out - (n - maxText) - 512
	for {
		keep = max(keep, 0)
		*env = orig
		so := keep * len(orig.Data.Stdout) / max(out, 1)
		env.Data.Stdout = cutTail(orig.Data.Stdout, so)
		env.Data.Stderr = cutTail(orig.Data.Stderr, keep-so)
		env.Data.Truncated = true
		where := "the rest is not kept"
		if env.Data.FullOutputPath != nil {
			where = "the full output file has the rest"
		}
		env.Note(fmt.Sprintf("Output cut further to the %d characters %s shows its model; %s.", maxText, client, where))
		env.Settle()
		if utf8.RuneCountInString(env.Text) <= maxText || keep == 0 {
			return
		}
		keep -= max(keep/4, 512)
	}
}

// cutTail keeps about n bytes of s, a quarter from the head and the rest from
// the tail, on UTF-8 boundaries, with a marker saying how much was cut.
func cutTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n/4, len(s)-(n-n/4)
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return fmt.Sprintf("%s\n[… %d bytes cut …]\n%s", s[:head], tail-head, s[tail:])
}
