package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// UndoTool is the tool that lists the checkpoints of the project and restores
// one, when Options.UndoTool offers it.
const UndoTool = "undo"

type undoArgs struct {
	ID      int  `json:"id"`
	Confirm bool `json:"confirm"`
}

// addUndoTool registers the undo tool.
func (s *Server) addUndoTool() {
	zero := 0.0
	s.mcp.AddTool(&mcp.Tool{
		Name:  UndoTool,
		Title: "Undo",
		Description: "Take back what shell commands changed in the project. Every command that may write gets a checkpoint of the project first, whose id its result names. " +
			"Without arguments: the recent commands and what each changed. With `id`: what command `id` changed and what changed after it, which undoing it would also take back; nothing is restored. " +
			"With `id` and `confirm: true`: the project is put back as it was before command `id` (.git included); the state just before the undo is checkpointed, so the undo can be undone too.",
		InputSchema: &jsonschema.Schema{Type: "object", PropertyOrder: []string{"id", "confirm"}, Properties: map[string]*jsonschema.Schema{
			"id":      {Type: "integer", Minimum: &zero, Description: "The id a command's result named (\"the undo tool with id N\")."},
			"confirm": {Type: "boolean", Description: "Restore now. Default false: only say what would be restored."},
		}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}},
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)},
	}, s.jobCall(func(ctx context.Context, _ *shellgate.Session, raw json.RawMessage) envelope.Envelope {
		var a undoArgs
		if params, bad := argsError(raw, &a, "id", "confirm"); bad != nil {
			// Not a command's refusal: headed as the tool's other ones.
			return envelope.NotAnswered("Nothing undone", params, *bad)
		}
		return s.undo(a)
	}))
}

// undo answers the undo tool.
func (s *Server) undo(a undoArgs) envelope.Envelope {
	params := map[string]any{}
	if a.ID != 0 {
		params["id"] = a.ID
	}
	if a.Confirm {
		params["confirm"] = true
	}
	fail := func(code envelope.Code, format string, args ...any) envelope.Envelope {
		return envelope.NotAnswered("Nothing undone", params, envelope.Err{Code: code, Message: fmt.Sprintf(format, args...)})
	}
	cp, err := s.gate.Checkpoints()
	if err != nil {
		return fail(envelope.ExecutionError, "Checkpoints are off in this server (%v), so nothing can be undone.", err)
	}
	var b strings.Builder
	switch {
	case a.ID < 0:
		return fail(envelope.InvalidParam, "Parameter 'id' must be a command's checkpoint number (1 or more), not %d; call undo without arguments to list them.", a.ID)
	case a.ID == 0 && a.Confirm:
		return fail(envelope.InvalidParam, "Give the command's checkpoint number in 'id' to restore (call without arguments to list them).")
	case a.ID == 0:
		recs, err := cp.Records()
		if err != nil {
			return fail(envelope.ExecutionError, "%v", err)
		}
		if len(recs) > 20 {
			recs = recs[len(recs)-20:]
		}
		if len(recs) == 0 {
			b.WriteString("No checkpoints yet.\n")
		}
		for _, r := range recs {
			what := "?"
			if sum, err := cp.Changes(r.ID); err == nil {
				what = sum.Text()
			}
			fmt.Fprintf(&b, "%d  %s  %s: %s\n", r.ID, r.Time.Local().Format(time.TimeOnly), oneLine(r.Command), what)
		}
	case !a.Confirm:
		r, err := cp.Record(a.ID)
		if err != nil {
			return noRecord(fail, err)
		}
		sum, err := cp.Changes(a.ID)
		if err != nil {
			return fail(envelope.ExecutionError, "%v", err)
		}
		since, err := cp.Since(a.ID)
		if err != nil {
			return fail(envelope.ExecutionError, "%v", err)
		}
		fmt.Fprintf(&b, "Command %d (%s) %s.\n", a.ID, oneLine(r.Command), sum.Text())
		listChanges(&b, sum.Changes)
		if since.Empty() {
			b.WriteString("Nothing changed after it.\n")
		} else {
			fmt.Fprintf(&b, "After it, the project %s; undoing command %d takes that back too:\n", since.Text(), a.ID)
			listChanges(&b, since.Changes)
		}
		fmt.Fprintf(&b, "Nothing was restored: call undo with id %d and confirm true to restore.\n", a.ID)
	default:
		r, err := cp.Record(a.ID)
		if err != nil {
			return noRecord(fail, err)
		}
		undo, sum, err := cp.Undo(a.ID)
		if err != nil {
			return fail(envelope.ExecutionError, "%v", err)
		}
		fmt.Fprintf(&b, "Restored the project to before command %d (%s): %s.\n", a.ID, oneLine(r.Command), sum.Text())
		if len(sum.Later) > 0 {
			// the user's own edits may be among them: never taken back unsaid
			fmt.Fprintf(&b, "That took back too what changed after command %d (later commands, the user's edits):\n", a.ID)
			listChanges(&b, sum.Later)
		}
		if raced := sum.RacedText(); raced != "" {
			fmt.Fprintf(&b, "%s (job_kill the job).\n", raced)
		}
		fmt.Fprintf(&b, "The state just before the undo is checkpoint %d: undo it with id %d.\n", undo, undo)
		if len(sum.NotRestored) > 0 {
			fmt.Fprintf(&b, "Not restored (%d, left as they are):\n", len(sum.NotRestored))
			for _, l := range sum.NotRestored {
				fmt.Fprintf(&b, "  %s: %s\n", l.Path, l.Why)
			}
		}
	}
	return envelope.Answer(b.String(), params)
}

// noRecord is the envelope of a checkpoint number the project's checkpoints
// do not hold, or of an error reading them.
func noRecord(fail func(envelope.Code, string, ...any) envelope.Envelope, err error) envelope.Envelope {
	var none *shellgate.NoCheckpointError
	if !errors.As(err, &none) {
		return fail(envelope.ExecutionError, "%v", err)
	}
	if none.Last == 0 {
		return fail(envelope.NotFound, "%s.", capitalized(err.Error()))
	}
	return fail(envelope.NotFound, "%s. Call undo without an id to list them.", capitalized(err.Error()))
}

func capitalized(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func listChanges(b *strings.Builder, changes []shellgate.Change) {
	for i, c := range changes {
		if i == 20 {
			fmt.Fprintf(b, "  … %d more\n", len(changes)-i)
			return
		}
		fmt.Fprintf(b, "  %s\n", c.Text())
	}
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}
