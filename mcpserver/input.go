package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// params are the tool's parameter names, in schema order.
var params = []string{"command", "directory", "timeout_ms", "description", "max_output_bytes", "run_in_background", "yield_after_ms", "tty"}

// clientParams are parameters that clients add to every tool on their own, which
// each tool accepts and ignores (they are not listed in the schemas):
//
//   - wait_for_previous (Gemini CLI): true asks Gemini's scheduler to run the call
//     after the calls before it in the same turn instead of beside them. Gemini acts
//     on it before sending the call; by the time it arrives here it has done its
//     work, and the server runs every call as it comes.
var clientParams = []string{"wait_for_previous"}

// checkClientParams checks the type of the client parameters present in fields
// (each is a boolean) and returns a message for the first that is not.
func checkClientParams(fields map[string]json.RawMessage) string {
	for _, name := range clientParams {
		v, ok := fields[name]
		if !ok || bytes.Equal(v, []byte("null")) {
			continue
		}
		var b bool
		if json.Unmarshal(v, &b) != nil {
			return fmt.Sprintf("Parameter '%s' must be true or false, not %s.", name, kind(v))
		}
	}
	return ""
}

// parseArguments turns a tools/call "arguments" object into a Request. The SDK's
// schema validation is not used (the tool is registered with the low-level
// Server.AddTool) so that bad input becomes an INVALID_PARAM envelope the model
// can read, rather than a generic validation message. Range checks (timeout_ms,
// empty command) are left to the Gate, which knows the configured limits.
func parseArguments(raw json.RawMessage, maxTimeoutMS int64, maxOutput int) (shellgate.Request, *envelope.Envelope) {
	var req shellgate.Request
	input := map[string]any{}
	fail := func(format string, args ...any) (shellgate.Request, *envelope.Envelope) {
		// What was refused may be what is too big to echo.
		env := envelope.NotRun(req.Command, envelope.CutParams(input, envelope.EchoLimit), envelope.Err{Code: envelope.InvalidParam, Message: fmt.Sprintf(format, args...)})
		return req, &env
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return fail("Missing required parameter 'command'.")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fail("Arguments must be a JSON object with a 'command' string, not %s.", kind(raw))
	}
	// Keep what was given, for context.params_input, before judging it.
	for k, v := range fields {
		var x any
		if json.Unmarshal(v, &x) == nil {
			input[k] = x
		}
	}
	json.Unmarshal(fields["command"], &req.Command) // for data.command, whatever else is wrong
	var unknown []string
	for k := range fields {
		if !slices.Contains(params, k) && !slices.Contains(clientParams, k) {
			unknown = append(unknown, "'"+envelope.CutMiddle(k, 64)+"'")
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		if n := len(unknown); n > 4 {
			// Named a few: ten thousand keys would be a refusal that big.
			unknown = append(unknown[:4], fmt.Sprintf("and %d more", n-4))
		}
		return fail("Unknown parameter %s; the parameters are %s.", strings.Join(unknown, ", "), strings.Join(params, ", "))
	}
	if msg := checkClientParams(fields); msg != "" {
		return fail("%s", msg)
	}
	str := func(name string, dst *string) string {
		v, ok := fields[name]
		if !ok || bytes.Equal(v, []byte("null")) {
			return ""
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return fmt.Sprintf("Parameter '%s' must be a string, not %s.", name, kind(v))
		}
		return ""
	}
	for _, p := range []struct {
		name string
		dst  *string
	}{{"command", &req.Command}, {"directory", &req.Directory}, {"description", &req.Description}} {
		if msg := str(p.name, p.dst); msg != "" {
			return fail("%s", msg)
		}
	}
	if v, ok := fields["command"]; ok && req.Command == "" && !bytes.Equal(v, []byte("null")) {
		// Given, but empty: not the Gate's "missing" (a Request cannot tell).
		return fail("Parameter 'command' is empty or only whitespace; give a shell command to run.")
	}
	if msg := numbers(fields, &req, maxTimeoutMS, maxOutput); msg != "" {
		return fail("%s", msg)
	}
	for _, b := range []struct {
		name string
		dst  *bool
	}{{"run_in_background", &req.RunInBackground}, {"tty", &req.TTY}} {
		if v, ok := fields[b.name]; ok && !bytes.Equal(v, []byte("null")) {
			if err := json.Unmarshal(v, b.dst); err != nil {
				return fail("Parameter '%s' must be true or false, not %s.", b.name, kind(v))
			}
		}
	}
	return req, nil
}

// integer accepts a JSON number with no fractional part (10, 10.0, 1e4).
func integer(v json.RawMessage) (int64, bool) {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// echoed is a value as a refusal quotes it: cut in the middle to 64 bytes, so
// that a megabyte given where a number belongs is not sent back whole.
func echoed(v json.RawMessage) string { return envelope.CutMiddle(string(v), 64) }

// kind names a JSON value's type for error messages.
func kind(v json.RawMessage) string {
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// numbers reads the integer parameters into req, or says which is wrong.
func numbers(fields map[string]json.RawMessage, req *shellgate.Request, maxTimeoutMS int64, maxOutput int) string {
	given := func(name string) (json.RawMessage, bool) {
		v, ok := fields[name]
		return v, ok && !bytes.Equal(v, []byte("null"))
	}
	if v, ok := given("timeout_ms"); ok {
		ms, ok := integer(v)
		if !ok {
			return fmt.Sprintf("timeout_ms must be an integer between 1 and %d (got %s).", maxTimeoutMS, echoed(v))
		}
		req.TimeoutMS = &ms
	}
	if v, ok := given("max_output_bytes"); ok {
		n, ok := integer(v)
		if !ok || n < 1 || n > math.MaxInt32 {
			return fmt.Sprintf("max_output_bytes must be an integer between 1 and %d (got %s).", maxOutput, echoed(v))
		}
		req.MaxOutputBytes = int(n)
	}
	if v, ok := given("yield_after_ms"); ok {
		ms, ok := integer(v)
		if !ok {
			return fmt.Sprintf("yield_after_ms must be an integer between 1 and %d (got %s).", maxTimeoutMS, echoed(v))
		}
		req.YieldAfterMS = &ms
	}
	return ""
}
