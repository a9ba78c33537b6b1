package hook

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestClaudeCodePrefixExceptions(t *testing.T) {
	home := "/home/u"
	snap := "/home/u/.claude/shell-snapshots/snapshot-bash-1763827200000-abc123.sh"
	// As Claude Code 2.1.328 builds a Bash command for CLAUDE_CODE_SHELL_PREFIX.
	wrapper := `source ` + snap + ` 2>/dev/null || true && { \builtin shopt -u extglob || \builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL; } >/dev/null 2>&1 || true && export PATH="${PATH:+$PATH:}"'/home/u/.local/bin' && eval 'git status' < /dev/null && pwd -P >| /tmp/claude-8f3a-cwd`
	tests := []struct {
		name            string
		command         string
		writable, allow []string
	}{
		{"the wrapper", wrapper, []string{"/tmp/claude-8f3a-cwd"}, []string{"source " + snap}},
		{"quoted paths", `source '` + snap + `' 2>/dev/null || true && eval 'ls' && pwd -P >| '/tmp/claude-1-cwd'`, []string{"/tmp/claude-1-cwd"}, []string{"source " + snap}},
		{"no wrapper", "git status", nil, nil},
		{"cwd file not last", "pwd -P >| /tmp/claude-1-cwd && rm x", nil, nil},
		{"another file name", "pwd -P >| /tmp/x", nil, nil},
		{"relative cwd file", "pwd -P >| claude-1-cwd", nil, nil},
		{"dotted cwd file", "pwd -P >| /tmp/../etc/claude-1-cwd", nil, nil},
		{"other redirect", "pwd -P > /tmp/claude-1-cwd", nil, nil},
		{"cwd file outside the temp dir", "eval ls && pwd -P >| /home/u/.ssh/claude-1-cwd", nil, nil},
		{"cwd file below the temp dir", "eval ls && pwd -P >| /tmp/a/claude-1-cwd", nil, nil},
		{"expanded cwd file", "pwd -P >| $TMPDIR/claude-1-cwd", nil, nil},
		{"snapshot elsewhere", "source /tmp/snapshot-bash-1.sh && pwd -P >| /tmp/claude-1-cwd", []string{"/tmp/claude-1-cwd"}, nil},
		{"snapshot in a subdirectory", "source /home/u/.claude/shell-snapshots/x/snapshot-bash-1.sh", nil, nil},
		{"not a snapshot name", "source /home/u/.claude/shell-snapshots/evil.sh", nil, nil},
		{"snapshot with a glob", "source '/home/u/.claude/shell-snapshots/snapshot-*.sh'", nil, nil},
		{"two statements", "source " + snap + "; pwd -P >| /tmp/claude-1-cwd", nil, nil},
		{"not bash", "eval 'x", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, a := ClaudeCodePrefixExceptions(tc.command, filepath.FromSlash(home), "/tmp/", "")
			if !slices.Equal(w, tc.writable) || !slices.Equal(a, tc.allow) {
				t.Errorf("got writable %q allow %q; want %q %q", w, a, tc.writable, tc.allow)
			}
		})
	}
}

func TestShapedNames(t *testing.T) {
	for name, want := range map[string]bool{
		"claude-8f3a-cwd": true, "claude--cwd": false, "claude-cwd": false, "xclaude-1-cwd": false,
		"claude-1-cwdx": false, "claude-a/b-cwd": false, "claude-é-cwd": false,
	} {
		if got := cwdFileName(name); got != want {
			t.Errorf("cwdFileName(%q) = %v", name, got)
		}
	}
	for name, want := range map[string]bool{
		"snapshot-bash-1763827200000-abc123.sh": true, "snapshot-zsh_1.2.sh": true, "snapshot-.sh": false,
		"snapshot-a b.sh": false, "evil-snapshot-a.sh": false, "snapshot-a.shx": false,
	} {
		if got := snapshotName(name); got != want {
			t.Errorf("snapshotName(%q) = %v", name, got)
		}
	}
}
