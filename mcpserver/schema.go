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
			"run_in_background": {
				Type:        "boolean",
				Description: "Start the command as a job and return at once with its id (data.job.id): for servers, watchers and long builds. Read it with job_output, stop it with job_kill. The timeout applies only if timeout_ms is given.",
			},
			"yield_after_ms": {
				Type:        "integer",
				Description: "If the command still runs after this many milliseconds, return its output so far and let it go on as a job (nothing is killed).",
				Minimum:     &one,
				Maximum:     &max,
			},
			"tty": {
				Type:        "boolean",
				Description: "Run on a pseudo-terminal, as a job: for REPLs, prompts, editors and TUIs. Output is the rendered screen as plain text; answer with job_input.",
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
