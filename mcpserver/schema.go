package mcpserver

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/shellgate/shellgate/envelope"
)

// inputSchema is seed 001 §2.2's schema plus seed 003's description, with the
// configured timeouts.
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
				Description: "A short description of what the command does and why, for the user and the log. Not executed.",
			},
			"max_output_bytes": {
				Type:        "integer",
				Description: fmt.Sprintf("Bytes of output to show, stdout and stderr together (head and tail; the rest is saved to a file). Default %d, max %d.", outputLimit, maxOutputLimit),
				Default:     json.RawMessage(strconv.Itoa(outputLimit)),
				Minimum:     &one,
				Maximum:     &maxOut,
			},
		},
		PropertyOrder:        params,
		Required:             []string{"command"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
}

// outputSchema is the schema of structuredContent, the envelope's Brief, inferred
// from the Go type so the two cannot drift apart.
func outputSchema() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[envelope.Brief](nil)
	if err != nil {
		return nil, fmt.Errorf("envelope schema: %w", err)
	}
	if st := s.Properties["status"]; st != nil {
		st.Enum = []any{string(envelope.Success), string(envelope.Partial), string(envelope.Error)}
	}
	return s, nil
}
