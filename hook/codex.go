package hook

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/shellgate/shellgate/policy"
)

// Codex CLI: a PreToolUse command hook (developers.openai.com/codex/hooks), in
// ~/.codex/hooks.json. The payload is Claude Code's with Codex's extras:
// session_id, turn_id, transcript_path, cwd, model, permission_mode,
// hook_event_name, tool_name, tool_use_id and tool_input; Codex names its shell
// tool Bash, with tool_input.command. Codex gives hooks no project directory,
// and cwd is the call's workdir, so the root is the git work tree holding cwd
// (Codex's own default project root), else cwd. Codex 0.171 takes only permissionDecision "deny" (with a
// reason, which its model reads): "allow" and "ask" are rejected as unsupported
// and the hook counted as failed, which runs the command. So an allow is no
// decision ({}: Codex's own approval and sandbox apply), and an ask is a deny
// that says what approval would take.
var codex = &Agent{
	Name:   "codex",
	parse:  parseCodex,
	answer: answerCodex,
	settings: settingsSpec{
		userFile:    ".codex/hooks.json",
		homeEnv:     "CODEX_HOME",
		projectFile: ".codex/hooks.json",
		event:       "PreToolUse",
		matcher:     "Bash",
		timeoutKey:  "timeout", // seconds
		timeout:     10,
	},
}

func parseCodex(payload []byte, _ func(string) string) (Call, error) {
	c, err := parsePreToolUseBash(payload) // the same fields, as Codex documents them
	if c.Shell {
		c.Root = gitRoot(c.Dir)
	}
	return c, err
}

// gitRoot is the nearest directory at or above dir holding .git, where Codex
// finds the project root by default (project_root_markers); "" for none, and
// then the root is dir. Codex sets cwd to the call's workdir, which may be a
// subdirectory of the project.
func gitRoot(dir string) string {
	if !filepath.IsAbs(dir) {
		return "" // refused as a relative cwd
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// codexAnswer is Codex's PreToolUse output; an empty one decides nothing.
type codexAnswer struct {
	HookSpecificOutput *codexDecision `json:"hookSpecificOutput,omitempty"`
}

type codexDecision struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

func answerCodex(v policy.Verdict) any {
	var why string
	switch v.Decision {
	case policy.Allow:
		return codexAnswer{}
	case policy.Ask:
		// The model reads this after Codex's "Command blocked by PreToolUse hook:".
		why = said(v, v.Unasked()) + " Approval required, and Codex's hook cannot ask for it: do it another way, or ask the user to run it." +
			allowHint(v, " The user can allow it by adding")
	default:
		why = reason(v)
	}
	// Codex writes "<reason>. Command: <command>": one full stop, not two.
	why = strings.TrimSuffix(why, ".")
	return codexAnswer{&codexDecision{HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: why}}
}
