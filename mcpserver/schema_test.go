package mcpserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/lane"
)

// shellTool is the shell tool of a tools/list.
func shellTool(tools []*mcp.Tool) *mcp.Tool {
	for _, t := range tools {
		if t.Name == DefaultToolName {
			return t
		}
	}
	return &mcp.Tool{}
}

// The brief envelope's schema is declared once, on the shell tool, and every
// tool's structuredContent conforms to it: a command's, a refusal's, a job's
// start, its output, the job list and a kill. Before, each of the five tools
// carried its own copy (3 131 characters each, 15.6 K of a 22.5 K tools/list).
func TestOutputSchemaOnce(t *testing.T) {
	lane.Live(t)
	ctx := context.Background()
	srv, _ := newServer(t, shellgate.Config{}, Options{UndoTool: true})
	cs := connect(t, srv, nil, nil)
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, tool := range tools.Tools {
		if tool.OutputSchema != nil {
			declared = append(declared, tool.Name)
		}
	}
	if len(declared) != 1 || declared[0] != DefaultToolName {
		t.Fatalf("outputSchema declared on %v, want on %s alone", declared, DefaultToolName)
	}
	b, err := json.Marshal(shellTool(tools.Tools).OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 2600 {
		t.Errorf("outputSchema is %d characters, want at most 2600", len(b))
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := json.Marshal(tools.Tools)
	in, _ := json.Marshal(shellTool(tools.Tools).InputSchema)
	t.Logf("tools/list: %d characters; the shell tool's outputSchema %d, inputSchema %d", len(all), len(b), len(in))
	// The input schema's descriptions leave to the tool's description what it
	// says (the job tools, output cut to head and tail and saved): 1 499
	// characters before.
	if len(in) > 1400 {
		t.Errorf("the shell tool's inputSchema is %d characters, want at most 1400", len(in))
	}

	calls := []struct {
		tool string
		args map[string]any
	}{
		{DefaultToolName, args("command", "echo hi")},
		{DefaultToolName, args("command", "sudo true")},
		{DefaultToolName, args("command", "ls /nope")},
		{DefaultToolName, args("command", "sleep 30", "run_in_background", true)},
		{JobOutputTool, args("job_id", "j1")},
		{JobListTool, args()},
		{JobKillTool, args("job_id", "j1")},
		{UndoTool, args()},
	}
	for _, c := range calls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatal(err)
		}
		if res.StructuredContent == nil {
			t.Errorf("%s %v: no structuredContent", c.tool, c.args)
			continue
		}
		var v any
		remarshal(t, res.StructuredContent, &v)
		if err := resolved.Validate(v); err != nil {
			t.Errorf("%s %v: structuredContent does not conform to the outputSchema: %v", c.tool, c.args, err)
		}
	}
}

// Every schema in tools/list is an object where a schema is expected: a
// property, an item, a definition. A Go field of type any infers to the bare
// schema `true`, which the MCP Inspector's CLI counts as a portability error
// on every tools/list ("Schema portability: 1 error"; with --strict, exit 6:
// context.sandbox was one). additionalProperties: true stays: it is the
// portable way to say "a free-form object".
func TestSchemasHaveNoBareBooleans(t *testing.T) {
	srv, _ := newServer(t, shellgate.Config{}, Options{UndoTool: true})
	cs := connect(t, srv, nil, nil)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		for name, schema := range map[string]any{"inputSchema": tool.InputSchema, "outputSchema": tool.OutputSchema} {
			if schema == nil {
				continue
			}
			var v any
			remarshal(t, schema, &v)
			for _, path := range bareSchemas(v, tool.Name+"."+name) {
				t.Errorf("%s is a bare boolean, not a schema object", path)
			}
		}
	}
}

// bareSchemas returns the paths under schema s (decoded JSON) where a
// subschema is a boolean: each value of properties, patternProperties and
// $defs, and items.
func bareSchemas(s any, path string) []string {
	m, ok := s.(map[string]any)
	if !ok {
		return []string{path}
	}
	var bad []string
	for _, key := range []string{"properties", "patternProperties", "$defs"} {
		sub, _ := m[key].(map[string]any)
		for name, v := range sub {
			bad = append(bad, bareSchemas(v, path+"."+key+"."+name)...)
		}
	}
	if items, ok := m["items"]; ok {
		bad = append(bad, bareSchemas(items, path+".items")...)
	}
	return bad
}
