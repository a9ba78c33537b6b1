package hook

import (
	"path/filepath"
	"slices"
	"testing"
)

func TestParseClaudeCodeBash(t *testing.T) {
	home := "/home/u"
	snap := "/home/u/.claude/shell-snapshots/snapshot-bash-1763827200000-abc123.sh"
	// As Claude Code 2.1.328 builds a Bash command for CLAUDE_CODE_SHELL_PREFIX.
	wrapper := `source ` + snap + ` 2>/dev/null || true && { \builtin shopt -u extglob || \builtin setopt NO_EXTENDED_GLOB NO_BARE_GLOB_QUAL; } >/dev/null 2>&1 || true && export PATH="${PATH:+$PATH:}"'/home/u/.local/bin' && eval 'git status' < /dev/null && pwd -P >| /tmp/claude-8f3a-cwd`
	cwd := []string{"/tmp/claude-1-cwd"}
	tests := []struct {
		name            string
		script          string
		writable, allow []string
		command         string
	}{
		{"the wrapper", wrapper, []string{"/tmp/claude-8f3a-cwd"}, []string{"source " + snap}, "git status"},
		{"quoted paths", `source '` + snap + `' 2>/dev/null || true && eval 'ls -l '"'"'a b'"'"'' && pwd -P >| '/tmp/claude-1-cwd'`, cwd, []string{"source " + snap}, "ls -l 'a b'"},
		{"escaped quotes", `eval 'echo '\''hi'\''' && pwd -P >| /tmp/claude-1-cwd`, cwd, nil, "echo 'hi'"},
		{"expansion in double quotes", `eval 'echo '"$x"'' && pwd -P >| /tmp/claude-1-cwd`, cwd, nil, ""},
		{"eval reading a file", `eval 'ls' < input && pwd -P >| /tmp/claude-1-cwd`, cwd, nil, ""},
		{"eval of a variable", `eval "$x" && pwd -P >| /tmp/claude-1-cwd`, cwd, nil, ""},
		{"no wrapper", "git status", nil, nil, ""},
		{"cwd file not last", "pwd -P >| /tmp/claude-1-cwd && rm x", nil, nil, ""},
		{"another file name", "pwd -P >| /tmp/x", nil, nil, ""},
		{"relative cwd file", "pwd -P >| claude-1-cwd", nil, nil, ""},
		{"dotted cwd file", "pwd -P >| /tmp/../etc/claude-1-cwd", nil, nil, ""},
		{"other redirect", "pwd -P > /tmp/claude-1-cwd", nil, nil, ""},
		{"cwd file outside the temp dir", "eval ls && pwd -P >| /home/u/.ssh/claude-1-cwd", nil, nil, ""},
		{"cwd file below the temp dir", "eval ls && pwd -P >| /tmp/a/claude-1-cwd", nil, nil, ""},
		{"expanded cwd file", "pwd -P >| $TMPDIR/claude-1-cwd", nil, nil, ""},
		{"snapshot elsewhere", "source /tmp/snapshot-bash-1.sh && pwd -P >| /tmp/claude-1-cwd", cwd, nil, ""},
		{"snapshot in a subdirectory", "source /home/u/.claude/shell-snapshots/x/snapshot-bash-1.sh", nil, nil, ""},
		{"not a snapshot name", "source /home/u/.claude/shell-snapshots/evil.sh", nil, nil, ""},
		{"snapshot with a glob", "source '/home/u/.claude/shell-snapshots/snapshot-*.sh'", nil, nil, ""},
		{"two statements", "source " + snap + "; pwd -P >| /tmp/claude-1-cwd", nil, nil, ""},
		{"not bash", "eval 'x", nil, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseClaudeCodeBash(tc.script, filepath.FromSlash(home), "/tmp/", "")
			if !slices.Equal(got.Writable, tc.writable) || !slices.Equal(got.Allow, tc.allow) || got.Command != tc.command {
				t.Errorf("got %+v; want writable %q allow %q command %q", got, tc.writable, tc.allow, tc.command)
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

func TestCommandWords(t *testing.T) {
	tests := []struct {
		line string
		want []string // nil: not one simple command of literal words
	}{
		{"/usr/local/bin/shellgate hook claude-code", []string{"/usr/local/bin/shellgate", "hook", "claude-code"}},
		{`'/opt/my tools/shellgate' hook claude-code --mode never`, []string{"/opt/my tools/shellgate", "hook", "claude-code", "--mode", "never"}},
		{`"/opt/x/shellgate" hook\ a`, []string{"/opt/x/shellgate", "hook a"}},
		{"shellgate hook claude-code", []string{"shellgate", "hook", "claude-code"}},
		{"~/.local/bin/shellgate hook claude-code", []string{filepath.Join("/home/u", ".local/bin/shellgate"), "hook", "claude-code"}},
		{"shellgate hook ~/x", nil}, // ~ elsewhere: left to the shell
		{"~root/bin/shellgate hook", nil},
		{"'~/bin/shellgate' hook", []string{"~/bin/shellgate", "hook"}}, // quoted: a relative path, as the shell reads it
		{"shellgate hook claude-code; rm -rf ~", nil},
		{"shellgate hook claude-code && id", nil},
		{"shellgate hook claude-code | tee x", nil},
		{"shellgate hook claude-code > /tmp/x", nil},
		{"shellgate hook claude-code < /etc/passwd", nil},
		{"X=1 shellgate hook claude-code", nil},
		{"shellgate hook $(id)", nil},
		{"shellgate hook `id`", nil},
		{`shellgate hook "$HOME"`, nil},
		{`"$CLAUDE_PROJECT_DIR"/shellgate hook claude-code`, nil},
		{"shellgate hook claude-*", nil},
		{"shellgate hook claude-code &", nil},
		{"! shellgate hook claude-code", nil},
		{"(shellgate hook claude-code)", nil},
		{"shellgate hook claude-code\nid", nil},
		{"", nil},
		{"'unterminated", nil},
	}
	for _, tc := range tests {
		got, ok := CommandWords(tc.line, "/home/u")
		if ok != (tc.want != nil) || !slices.Equal(got, tc.want) {
			t.Errorf("CommandWords(%q) = %q, %v; want %q", tc.line, got, ok, tc.want)
		}
	}
}
