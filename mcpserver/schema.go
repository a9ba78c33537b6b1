package mcpserver

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/shellgate/shellgate/envelope"
)

// inputSchema is seed 001 §2.2's schema plus seed 003's description, with the
// configured timeouts. The seed's three descriptions are kept as it words them;
// the others leave to the tool's description what it says already (what the
// job tools do, that output is cut to its head and tail and saved to a file).
func inputSchema(defaultTimeoutMS, maxTimeoutMS int64, outputLimit, maxOutputLimit int) *jsonschema.Schema {
	one, max, maxOut := 1.0, float64(maxTimeoutMS), float64(maxOutputLimit)
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"command": {
				Type:        "string",
				Description: "The shell command to execute. Command chaining (&&, ||, ;) is allowed.",
			},
			"directory": {
				Type:        "string",
				Description: "Working directory relative to project root. Defaults to '.'.",
				Default:     json.RawMessage(`"."`),
			},
			"timeout_ms": {
				Type:        "integer",
				Description: fmt.Sprintf("Execution timeout in milliseconds. Default %d, max %d.", defaultTimeoutMS, maxTimeoutMS),
				Default:     json.RawMessage(strconv.FormatInt(defaultTimeoutMS, 10)),
				Minimum:     &one,
				Maximum:     &max,
			},
			"description": {
				Type:        "string",
				Description: "A few words on what the command does and why, for the user and the log; not executed.",
			},
			"max_output_bytes": {
				Type:        "integer",
				Description: fmt.Sprintf("Bytes of output to show, stdout and stderr together. Default %d, max %d.", outputLimit, maxOutputLimit),
				Default:     json.RawMessage(strconv.Itoa(outputLimit)),
				Minimum:     &one,
				Maximum:     &maxOut,
			},
			"run_in_background": {
				Type:        "boolean",
				Description: "Start the command as a job and return at once with its id. The timeout applies only if timeout_ms is given.",
			},
			"yield_after_ms": {
				Type:        "integer",
				Description: "Still running after this many milliseconds: return its output so far and let it go on as a job (nothing is killed).",
				Minimum:     &one,
				Maximum:     &max,
			},
			"tty": {
				Type:        "boolean",
				Description: "Run on a pseudo-terminal, as a job (REPLs, prompts, TUIs); its output is the screen as plain text, answer with job_input.",
			},
		},
		PropertyOrder:        params,
		Required:             []string{"command"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
}

// outputSchema is the schema of structuredContent, the envelope's Brief, inferred
// from the Go type so the two cannot drift apart, then made as short as it can be
// and say the same of every Brief (a client may hand it to its model with the
// tool): Brief leaves out every field at its zero value, so no field is ever
// null and the pointers' "null" types go; extra properties are not forbidden
// field by field; a job, in data.job and each of data.jobs, is described once.
// Only the shell tool declares it: the job tools' and undo's results are Briefs
// too, and a second copy per tool would only repeat it (an outputSchema is
// optional; structuredContent without one is still sent).
func outputSchema() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[envelope.Brief](nil)
	if err != nil {
		return nil, fmt.Errorf("envelope schema: %w", err)
	}
	compact(s)
	if st := s.Properties["status"]; st != nil {
		st.Enum = []any{string(envelope.Success), string(envelope.Partial), string(envelope.Error)}
	}
	data := s.Properties["data"]
	if data == nil || data.Properties["job"] == nil || data.Properties["jobs"] == nil || data.Properties["jobs"].Items == nil {
		return nil, fmt.Errorf("envelope schema: no data.job or data.jobs")
	}
	// context.sandbox is an `any` in Go (a map when a layer is missing), which
	// infers to the bare schema `true`: the MCP Inspector reports that as a
	// portability error ("Bare `true` used where a schema object is expected").
	ctx := s.Properties["context"]
	if ctx == nil || ctx.Properties["sandbox"] == nil {
		return nil, fmt.Errorf("envelope schema: no context.sandbox")
	}
	ctx.Properties["sandbox"] = &jsonschema.Schema{Type: "object"}
	s.Defs = map[string]*jsonschema.Schema{"job": data.Properties["job"]}
	data.Properties["job"] = &jsonschema.Schema{Ref: "#/$defs/job"}
	data.Properties["jobs"].Items = &jsonschema.Schema{Ref: "#/$defs/job"}
	return s, nil
}

// compact rewrites s and what it holds: a type of ["null", T] becomes T, and
// additionalProperties: false is left out.
func compact(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	if a := s.AdditionalProperties; a != nil && a.Not != nil {
		s.AdditionalProperties = nil
	}
	for _, p := range s.Properties {
		compact(p)
	}
	compact(s.Items)
}
