package hook

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/shellgate/shellgate/policy"
)

// Cursor: a beforeShellExecution hook in hooks.json (cursor.com/docs/agent/hooks).
// The payload has hook_event_name, conversation_id, generation_id, workspace_roots,
// command and cwd. The answer is permission "allow", "deny" or "ask", with
// user_message shown to the user and agent_message sent to the model.
var cursor = &Agent{
	Name:   "cursor",
	parse:  parseCursor,
	answer: answerCursor,
	pass:   struct{}{},
	settings: settingsSpec{
		userFile:    ".cursor/hooks.json",
		projectFile: ".cursor/hooks.json",
		event:       "beforeShellExecution",
		flat:        true,
	},
}

type cursorPayload struct {
	HookEventName  string   `json:"hook_event_name"`
	Command        *string  `json:"command"`
	Cwd            string   `json:"cwd"`
	WorkspaceRoots []string `json:"workspace_roots"`
}

func parseCursor(payload []byte, _ func(string) string) (Call, error) {
	var p cursorPayload
	if err := decodeObject(payload, &p); err != nil {
		return Call{}, err
	}
	switch {
	case p.HookEventName == "":
		return Call{}, errors.New("the hook payload has no hook_event_name")
	case p.HookEventName != "beforeShellExecution":
		return Call{}, nil
	case p.Command == nil:
		return Call{}, errors.New("the beforeShellExecution payload has no command string")
	}
	return Call{Shell: true, Command: *p.Command, Dir: p.Cwd, Root: workspaceRoot(p.WorkspaceRoots, p.Cwd)}, nil
}

// workspaceRoot is the workspace root that holds cwd, else the first one.
func workspaceRoot(roots []string, cwd string) string {
	for _, r := range roots {
		if rel, err := filepath.Rel(r, cwd); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return r
		}
	}
	if len(roots) > 0 {
		return roots[0]
	}
	return ""
}

type cursorAnswer struct {
	Permission   string `json:"permission"`
	UserMessage  string `json:"user_message,omitempty"`
	AgentMessage string `json:"agent_message,omitempty"`
}

func answerCursor(v policy.Verdict) any {
	a := cursorAnswer{Permission: string(v.Decision)}
	if v.Decision != policy.Allow {
		a.UserMessage, a.AgentMessage = reason(v), reason(v)
		if v.Decision == policy.Ask {
			a.UserMessage = askReason(v)
		}
	}
	return a
}
