package mcpserver

import (
	"context"
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/policy"
)

func TestToolsList(t *testing.T) {
	lane.Live(t)
	tests := []struct {
		name     string
		opts     Options
		cfg      shellgate.Config
		wantName string
		wantDesc []string
		linux    bool // allow-listed egress needs the Linux sandbox
	}{
		{
			name:     "defaults",
			wantName: "run_shell_command",
			wantDesc: []string{"Network: OFF", "Mode auto;", "timeout_ms defaults to 120000", "max 600000", "51200 bytes a call", "a file holding the whole output", "catastrophic", "git commit -m"},
		},
		{
			name:     "Bash with network and short timeouts",
			opts:     Options{ToolName: "Bash"},
			cfg:      shellgate.Config{DefaultTimeout: 5e9, MaxTimeout: 60e9, OutputLimit: 1000, Policy: policy.Settings{Network: true}},
			wantName: "Bash",
			wantDesc: []string{"Network: on", "Mode auto;", "timeout_ms defaults to 5000", "max 60000", "1000 bytes a call"},
		},
		{
			name:     "allow-listed network",
			cfg:      shellgate.Config{Network: shellgate.NetworkConfig{Allow: []string{"registry.npmjs.org", "registries"}}},
			wantName: "run_shell_command",
			linux:    true,
			wantDesc: []string{"Network: allow-listed: only registry.npmjs.org, the package registries configured on this machine (registries), through HTTPS_PROXY"},
		},
		{
			name:     "never ask",
			cfg:      shellgate.Config{Policy: policy.Settings{Mode: policy.ModeNever}},
			wantName: "run_shell_command",
			wantDesc: []string{"Mode never, nobody is asked, so also refused:", "sandbox-escape"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.linux && runtime.GOOS != "linux" {
				t.Skip("allow-listed egress needs the Linux sandbox")
			}
			srv, root := newServer(t, tc.cfg, tc.opts)
			cs := connect(t, srv, nil, nil)
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var tool *mcp.Tool
			var names []string
			for _, x := range res.Tools {
				names = append(names, x.Name)
				if x.Name == tc.wantName {
					tool = x
				}
			}
			slices.Sort(names)
			want := []string{JobInputTool, JobKillTool, JobListTool, JobOutputTool, tc.wantName}
			slices.Sort(want)
			if tool == nil || !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
			for _, want := range append(tc.wantDesc, root) {
				if !strings.Contains(tool.Description, want) {
					t.Errorf("description lacks %q:\n%s", want, tool.Description)
				}
			}

			var in struct {
				Type       string
				Required   []string
				Properties map[string]struct {
					Type    string
					Default any
					Minimum *float64
					Maximum *float64
				}
				AdditionalProperties any
			}
			remarshal(t, tool.InputSchema, &in)
			if in.Type != "object" || len(in.Required) != 1 || in.Required[0] != "command" {
				t.Errorf("input schema type %q, required %v; want object, [command]", in.Type, in.Required)
			}
			info := srv.gate.Info()
			props := in.Properties
			checks := []struct {
				prop, typ string
				def       any
			}{
				{"command", "string", nil},
				{"directory", "string", "."},
				{"timeout_ms", "integer", float64(info.DefaultTimeout.Milliseconds())},
				{"description", "string", nil},
			}
			for _, c := range checks {
				p, ok := props[c.prop]
				if !ok {
					t.Errorf("input schema lacks %q", c.prop)
					continue
				}
				if p.Type != c.typ || p.Default != c.def {
					t.Errorf("%s: type %q default %v, want %q %v", c.prop, p.Type, p.Default, c.typ, c.def)
				}
			}
			if to := props["timeout_ms"]; to.Minimum == nil || *to.Minimum != 1 || to.Maximum == nil || *to.Maximum != float64(info.MaxTimeout.Milliseconds()) {
				t.Errorf("timeout_ms bounds %v…%v, want 1…%d", to.Minimum, to.Maximum, info.MaxTimeout.Milliseconds())
			}

			var out struct {
				Type       string
				Required   []string
				Properties map[string]any
			}
			remarshal(t, tool.OutputSchema, &out)
			for _, field := range []string{"status", "data", "text", "stats", "context", "error"} {
				if _, ok := out.Properties[field]; !ok {
					t.Errorf("output schema lacks %q", field)
				}
			}
		})
	}
}

func TestBadToolName(t *testing.T) {
	for _, name := range []string{"run shell", "bash!", strings.Repeat("x", 129)} {
		if err := CheckToolName(name); err == nil {
			t.Errorf("CheckToolName(%q) = nil, want an error", name)
		}
	}
	if err := CheckToolName("Bash"); err != nil {
		t.Error(err)
	}
}

func remarshal(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, to); err != nil {
		t.Fatal(err)
	}
}
