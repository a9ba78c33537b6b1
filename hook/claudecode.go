package hook

import (
	"errors"
	"fmt"
	"strings"

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
	leaves:    true, // its allow skips the prompt; no answer at all is its own flow
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
	c, err := parsePreToolUseBash(payload)
	if err != nil || !c.Shell {
		return c, err
	}
	c.Root = getenv("CLAUDE_PROJECT_DIR")
	c.Prefixed, c.PrefixProgram, c.PrefixFlags = shellgatePrefix(getenv("CLAUDE_CODE_SHELL_PREFIX"))
	return c, nil
}

// parsePreToolUseBash reads a PreToolUse payload as Claude Code and Codex
// send it: a Bash call's command and directory, or no shell call.
func parsePreToolUseBash(payload []byte) (Call, error) {
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
	return Call{Shell: true, Command: *p.ToolInput.Command, Dir: p.Cwd}, nil
}

// shellgatePrefix reads CLAUDE_CODE_SHELL_PREFIX as Claude Code does (docs/clients.md):
// the program is what comes before the last " -", and the rest its flags. It
// reports whether that program is shellgate exec, which answers to the name
// shellgate-exec; any other prefix leaves the command to the agent's shell.
func shellgatePrefix(prefix string) (ok bool, prog string, flags []string) {
	prefix = strings.TrimSpace(prefix)
	prog = prefix
	if i := strings.LastIndex(prefix, " -"); i >= 0 {
		prog, flags = prefix[:i], strings.Fields(prefix[i+1:])
	}
	base := prog[strings.LastIndexAny(prog, `/\`)+1:]
	if strings.TrimSuffix(base, ".exe") != "shellgate-exec" {
		return false, "", nil
	}
	return true, prog, flags
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
