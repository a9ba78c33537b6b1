package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/envelope"
)

// maxRefusal bounds a refusal's message: it names the parameter and quotes
// at most 64 bytes of what was given, whatever size that was.
const maxRefusal = 1024

// A value of the wrong type is quoted cut, not whole: a megabyte given for
// timeout_ms came back whole in error.message (session 38).
func TestRefusalsQuoteValuesCut(t *testing.T) {
	huge := strings.Repeat("9", 1<<20)
	for _, tc := range []struct{ name, raw, param string }{
		{"string timeout_ms", `{"command":"ls","timeout_ms":"` + huge + `"}`, "timeout_ms"},
		{"huge number timeout_ms", `{"command":"ls","timeout_ms":` + huge + `}`, "timeout_ms"},
		{"array max_output_bytes", `{"command":"ls","max_output_bytes":[` + strings.Repeat("1,", 1<<16) + `1]}`, "max_output_bytes"},
		{"10 000 unknown parameters", `{"command":"ls"` + strings.Repeat(`,"x`+huge[:8]+`":1`, 1) + manyKeys(10000) + `}`, "Unknown parameter"},
		{"object yield_after_ms", `{"command":"ls","yield_after_ms":{"a":"` + huge + `"}}`, "yield_after_ms"},
	} {
		_, env := parseArguments([]byte(tc.raw), 600000, 1<<20)
		if env == nil || env.Error == nil || env.Error.Code != envelope.InvalidParam || !strings.Contains(env.Error.Message, tc.param) {
			t.Errorf("%s: %+v; want INVALID_PARAM naming %s", tc.name, env, tc.param)
			continue
		}
		if len(env.Error.Message) > maxRefusal {
			t.Errorf("%s: a %d-byte message: %.120s…", tc.name, len(env.Error.Message), env.Error.Message)
		}
	}
	var dst struct {
		WaitMS int `json:"wait_ms"`
	}
	_, bad := argsError([]byte(`{"wait_ms":`+huge+`}`), &dst, "wait_ms")
	if bad == nil || !strings.Contains(bad.Message, "'wait_ms'") || len(bad.Message) > maxRefusal {
		t.Errorf("job tool, huge wait_ms: %+v", bad)
	}
}

// manyKeys is n unknown parameters, each a JSON member after a comma.
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(`,"k` + strings.Repeat("z", 60) + string(rune('a'+i%26)) + strings.Repeat("q", i%7) + `":` + "1")
	}
	return b.String()
}

// FuzzParseArguments: any tools/call arguments are a Request or an
// INVALID_PARAM refusal with a short message, never a panic; a Request
// carries the command as given (none when none was: the Gate refuses that).
func FuzzParseArguments(f *testing.F) {
	for _, s := range []string{
		`{"command":"ls"}`, `{"command":"ls","timeout_ms":1000,"directory":"sub","max_output_bytes":10,"tty":true}`,
		`{"command":5}`, `{"command":""}`, `{"command":"ls","timeout_ms":1.5}`, `{"command":"ls","timeout_ms":-1e308}`,
		`{"command":"ls","wait_for_previous":"yes"}`, `{"command":"ls","junk":1}`, `null`, `[]`, `"ls"`, ``, `{"command":"\u0000"}`,
		"{\"command\":\"\xff\"}", `{"command":"ls","yield_after_ms":null,"run_in_background":1}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		req, env := parseArguments([]byte(raw), 600000, 1<<20)
		if env != nil {
			if env.Error == nil || env.Error.Code != envelope.InvalidParam || env.Error.Message == "" || len(env.Error.Message) > maxRefusal {
				t.Fatalf("%q: refusal %+v", raw, env.Error)
			}
			return
		}
		var fields map[string]any
		if err := json.Unmarshal([]byte(raw), &fields); err != nil {
			t.Fatalf("%q: accepted, but is no JSON object: %v", raw, err)
		}
		if fields["command"] == nil { // missing: the Gate says so, as for the library
			if req.Command != "" {
				t.Fatalf("%q: command %q, given none", raw, req.Command)
			}
			return
		}
		if cmd, ok := fields["command"].(string); !ok || cmd != req.Command {
			t.Fatalf("%q: command %q, given %#v", raw, req.Command, fields["command"])
		}
	})
}
