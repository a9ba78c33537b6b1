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
func inputSchema(defaultTimeoutMS, maxTimeoutMS int64) *jsonschema.Schema {
	one, max := 1.0, float64(maxTimeoutMS)
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
		},
		PropertyOrder:        params,
		Required:             []string{"command"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
}

// outputSchema is the envelope's schema, inferred from the Go type so the two cannot
// drift apart.
func outputSchema() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[envelope.Envelope](nil)
	if err != nil {
		return nil, fmt.Errorf("envelope schema: %w", err)
	}
	if st := s.Properties["status"]; st != nil {
		st.Enum = []any{string(envelope.Success), string(envelope.Partial), string(envelope.Error)}
	}
	return s, nil
}
