package hook

import (
	"errors"
	"fmt"

	"github.com/shellgate/shellgate/policy"
)

// Claude Code: a PreToolUse command hook (code.claude.com/docs/en/hooks). The
// payload has session_id, transcript_path, cwd, permission_mode, hook_event_name,
// tool_name, tool_input and tool_use_id; for the Bash tool, tool_input.command.
// Hook commands get the project directory as $CLAUDE_PROJECT_DIR. The answer is
// hookSpecificOutput.permissionDecision allow / deny / ask with a
// permissionDecisionReason, which Claude reads on deny and the user sees on ask.
var claudeCode = &Agent{
	Name:      "claude-code",
	parse:     parseClaudeCode,
	answer:    answerClaudeCode,
	notesAsks: true, // CLAUDE_CODE_SHELL_PREFIX may run the command through shellgate exec
	settings: settingsSpec{
		userFile:    ".claude/settings.json",
		projectFile: ".claude/settings.json",
		event:       "PreToolUse",
		matcher:     "Bash",
		timeoutKey:  "timeout", // seconds
		timeout:     10,
	},
}

type claudeCodePayload struct {
	HookEventName string `json:"hook_event_name"`
	ToolName      string `json:"tool_name"`
	Cwd           string `json:"cwd"`
	ToolInput     struct {
		Command *string `json:"command"`
	} `json:"tool_input"`
}

func parseClaudeCode(payload []byte, getenv func(string) string) (Call, error) {
	var p claudeCodePayload
	if err := decodeObject(payload, &p); err != nil {
		return Call{}, err
	}
	switch {
	case p.HookEventName != "" && p.HookEventName != "PreToolUse":
		return Call{}, fmt.Errorf("hook_event_name is %q; this hook answers PreToolUse only", p.HookEventName)
	case p.ToolName == "":
		return Call{}, errors.New("the hook payload has no tool_name")
	case p.ToolName != "Bash":
		return Call{}, nil
	case p.ToolInput.Command == nil:
		return Call{}, errors.New("the Bash call has no tool_input.command string")
	}
	return Call{Shell: true, Command: *p.ToolInput.Command, Dir: p.Cwd, Root: getenv("CLAUDE_PROJECT_DIR")}, nil
}

type claudeCodeAnswer struct {
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`
}

func answerClaudeCode(v policy.Verdict) any {
	var a claudeCodeAnswer
	a.HookSpecificOutput.HookEventName = "PreToolUse"
	a.HookSpecificOutput.PermissionDecision = string(v.Decision) // the same three words
	a.HookSpecificOutput.PermissionDecisionReason = reason(v)    // deny: Claude reads it
	if v.Decision == policy.Ask {
		a.HookSpecificOutput.PermissionDecisionReason = askReason(v) // the user reads it
	}
	return a
}
