package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/sandbox"
	"github.com/shellgate/shellgate/policy"
)

// Claude Code cuts an MCP tool's description at about 2 048 characters, and its
// model never sees the rest. Every tool's description fits in MaxDescription
// under every kind of configuration, a long project root included, and the run
// tool's still says what the model needs: what runs where, the timeout, jobs,
// output cut and where the whole output is, what is refused or asked, and what to
// do instead — in that order, the essentials first.
func TestToolDescriptionsFit(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("a-rather-long-project-directory-name/", 4))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	configs := []struct {
		name string
		cfg  shellgate.Config
		want []string // besides the essentials
		opts Options
	}{
		{"defaults", shellgate.Config{}, nil, Options{}},
		{"undo tool", shellgate.Config{}, nil, Options{UndoTool: true}},
		{"long root", shellgate.Config{Root: long}, []string{long}, Options{}},
		{"no sandbox", shellgate.Config{Sandbox: shellgate.SandboxConfig{Mode: sandbox.Off}}, []string{"code-execution", "stored-code", "dynamic"}, Options{}},
		{"no sandbox, untrusted, long root", shellgate.Config{Root: long, Sandbox: shellgate.SandboxConfig{Mode: sandbox.Off}, Policy: policy.Settings{Mode: policy.ModeUntrusted}}, []string{"untrusted", long}, Options{}},
		{"never", shellgate.Config{Policy: policy.Settings{Mode: policy.ModeNever}}, []string{"nobody is asked"}, Options{}},
		{"network", shellgate.Config{Policy: policy.Settings{Network: true}}, []string{"Network: on"}, Options{}},
		{"allow-list", shellgate.Config{Network: shellgate.NetworkConfig{Allow: []string{"registry.npmjs.org", "pypi.org", "files.pythonhosted.org", "proxy.golang.org", "registries"}}}, []string{"pypi.org"}, Options{}},
	}
	// The essentials, in the order the model should meet them.
	essentials := []string{"Runs a shell command", "timeout_ms", "killed", "run_in_background", "job_output", "job_kill",
		"bytes a call", "a file holding the whole output", "Network:", "Refused:", "catastrophic", "the user is asked|nobody is asked", "Instead:", "Never retry"}
	for _, tc := range configs {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "allow-list" && runtime.GOOS != "linux" {
				t.Skip("allow-listed egress needs the Linux sandbox")
			}
			srv, root := newServer(t, tc.cfg, tc.opts)
			res, err := connect(t, srv, nil, nil).ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.opts.UndoTool && len(res.Tools) != 6 {
				t.Errorf("%d tools, want the undo tool among 6", len(res.Tools))
			}
			for _, tool := range res.Tools {
				n := utf8.RuneCountInString(tool.Description)
				if n > MaxDescription {
					t.Errorf("%s: description of %d characters, over %d:\n%s", tool.Name, n, MaxDescription, tool.Description)
				}
				if tool.Name != DefaultToolName {
					continue
				}
				t.Logf("%s: %d characters", tool.Name, n)
				d, at := tool.Description, 0
				for _, e := range essentials {
					i := -1
					for _, alt := range strings.Split(e, "|") {
						if j := strings.Index(d[at:], alt); j >= 0 {
							i = j
							break
						}
					}
					if i < 0 {
						t.Errorf("the description lacks %q after position %d:\n%s", e, at, d)
						continue
					}
					at += i
				}
				// In the sandbox the home shows no credential at all: they
				// are absent (it said "read empty", which they do not).
				if strings.Contains(d, "thrown away with the session") && !strings.Contains(d, "~/.ssh and other secrets are absent") {
					t.Errorf("the description says secrets are something other than absent:\n%s", d)
				}
				for _, w := range append(tc.want, root) {
					if !strings.Contains(d, w) {
						t.Errorf("the description lacks %q:\n%s", w, d)
					}
				}
			}
		})
	}
}

// The models of Claude Code, Codex, Gemini CLI, opencode … read a result's text,
// not its structuredContent (docs/mcp.md, "What the model reads"): the tools'
// descriptions and parameters name what that text says (a job id, the file of
// the whole output), not envelope fields such as data.full_output_path that the
// model never sees.
func TestDescriptionsNameNoEnvelopeFields(t *testing.T) {
	srv, _ := newServer(t, shellgate.Config{}, Options{UndoTool: true})
	res, err := connect(t, srv, nil, nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	field := regexp.MustCompile(`\b(data|error|stats|context)\.[a-z_]+`)
	for _, tool := range res.Tools {
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{tool.Description, string(b)} {
			if m := field.FindAllString(s, -1); m != nil {
				t.Errorf("%s names %v, which a text-only client's model never reads:\n%s", tool.Name, m, s)
			}
		}
	}
}

// job_output waits for until or port as long as wait_ms (30 s by default):
// their own descriptions say so.
func TestUntilAndPortNameWaitMS(t *testing.T) {
	srv, _ := newServer(t, shellgate.Config{}, Options{})
	res, err := connect(t, srv, nil, nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name != JobOutputTool {
			continue
		}
		var schema struct {
			Properties map[string]struct{ Description string }
		}
		b, _ := json.Marshal(tool.InputSchema)
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"until", "port"} {
			if d := schema.Properties[p].Description; !strings.Contains(d, "up to wait_ms") {
				t.Errorf("%s: %q says not how long it waits", p, d)
			}
		}
		return
	}
	t.Fatal("no job_output tool")
}

// The description gives the default timeout as a person writes it ("2m"), not
// as Go prints a Duration ("2m0s").
func TestDescriptionTimeoutWords(t *testing.T) {
	for _, tc := range []struct {
		timeout time.Duration
		want    string
	}{
		{0, "timeout_ms defaults to 120000 (2m),"},
		{90 * time.Second, "timeout_ms defaults to 90000 (1m30s),"},
		{time.Hour / 6, "timeout_ms defaults to 600000 (10m),"},
		{1500 * time.Millisecond, "timeout_ms defaults to 1500 (1.5s),"},
	} {
		srv, _ := newServer(t, shellgate.Config{DefaultTimeout: tc.timeout}, Options{})
		res, err := connect(t, srv, nil, nil).ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if d := shellTool(res.Tools).Description; !strings.Contains(d, tc.want) {
			t.Errorf("default timeout %s: the description lacks %q:\n%.200s", tc.timeout, tc.want, d)
		}
	}
}
