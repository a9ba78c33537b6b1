package hook

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/shellgate/shellgate/policy"
)

// Gemini CLI: a BeforeTool command hook on run_shell_command (docs/hooks/reference.md
// and docs/tools/shell.md in the @google/gemini-cli package). The payload has
// session_id, transcript_path, cwd, hook_event_name, timestamp, tool_name and
// tool_input; run_shell_command's input has command and an optional dir_path,
// absolute or relative to the workspace root. Hooks get the project root as
// $GEMINI_PROJECT_DIR. The answer is decision "allow" or "deny" with a reason that
// is sent to the model. The documentation gives BeforeTool no "ask", so an ask is
// answered deny, saying that approval is required — as shellgate does wherever no
// one can be asked.
var geminiCLI = &Agent{
	Name:   "gemini-cli",
	parse:  parseGemini,
	answer: answerGemini,
	pass:   struct{}{}, // stdout must be JSON when the exit status is 0
	leaves: true,
	leave:  struct{}{}, // no decision: Gemini CLI's own confirmation
	settings: settingsSpec{
		userFile:    ".gemini/settings.json",
		projectFile: ".gemini/settings.json",
		event:       "BeforeTool",
		matcher:     "run_shell_command",
		name:        "shellgate",
		timeoutKey:  "timeout", // milliseconds
		timeout:     10000,
	},
}

type geminiPayload struct {
	HookEventName string `json:"hook_event_name"`
	ToolName      string `json:"tool_name"`
	Cwd           string `json:"cwd"`
	ToolInput     struct {
		Command *string `json:"command"`
		DirPath string  `json:"dir_path"`
	} `json:"tool_input"`
}

func parseGemini(payload []byte, getenv func(string) string) (Call, error) {
	var p geminiPayload
	if err := decodeObject(payload, &p); err != nil {
		return Call{}, err
	}
	switch {
	case p.HookEventName != "" && p.HookEventName != "BeforeTool":
		return Call{}, fmt.Errorf("hook_event_name is %q; this hook answers BeforeTool only", p.HookEventName)
	case p.ToolName == "":
		return Call{}, errors.New("the hook payload has no tool_name")
	case p.ToolName != "run_shell_command":
		return Call{}, nil
	case p.ToolInput.Command == nil:
		return Call{}, errors.New("the run_shell_command call has no tool_input.command string")
	}
	if p.Cwd != "" && !filepath.IsAbs(p.Cwd) {
		return Call{}, fmt.Errorf("the working directory %q is not absolute", p.Cwd)
	}
	root := getenv("GEMINI_PROJECT_DIR")
	dir := p.Cwd
	if d := p.ToolInput.DirPath; d != "" {
		base := root
		if base == "" {
			base = p.Cwd
		}
		if filepath.IsAbs(d) || base == "" {
			dir = d
		} else {
			dir = filepath.Join(base, d)
		}
	}
	return Call{Shell: true, Command: *p.ToolInput.Command, Dir: dir, Root: root}, nil
}

type geminiAnswer struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
}

func answerGemini(v policy.Verdict) any {
	switch v.Decision {
	case policy.Allow:
		return geminiAnswer{Decision: "allow"}
	case policy.Ask:
		return geminiAnswer{Decision: "deny", Reason: said(v, v.Unasked()) + " Approval required, and this agent's hook cannot ask for it." +
			allowHint(v, " The user can allow it by adding")}
	}
	return geminiAnswer{Decision: "deny", Reason: reason(v)}
}
