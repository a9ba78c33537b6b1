package helper

import (
	"testing"

	"github.com/shellgate/shellgate/internal/copyup"
)

// TestJudgeGitRedirects: in a root whose .git directory was there at the
// start, a command cannot make the names that send the host's git to
// another repository's config, however it makes them; git's own names
// there, and a linked worktree's commondir, are made as asked.
func TestJudgeGitRedirects(t *testing.T) {
	root := "/var/tmp/lab/root"
	m := &mounter{spec: &Spec{Writable: []string{root}, Quarantine: root + "/.shellgate-quarantine"},
		gitAtStart: true, gitDirAtStart: true, configAtStart: true}
	tests := []struct {
		path string
		op   copyup.Op
		want copyup.Verdict
	}{
		{".git/commondir", copyup.OpMake, copyup.Refused},
		{".git/commondir", copyup.OpRename, copyup.Refused}, // a file renamed over it
		{".git/commondir", copyup.OpLink, copyup.Refused},   // a symlink or a hard link
		{".git/commondir", copyup.OpWrite, copyup.Refused},
		{".git", copyup.OpRename, copyup.Crossed}, // a filled directory renamed onto .git
		{".git/modules/sub/commondir", copyup.OpMake, copyup.Refused},
		{".git/modules/a/b/commondir", copyup.OpRename, copyup.Refused},
		{".git/config", copyup.OpRename, copyup.Refused},
		// git's own
		{".git/worktrees/wt/commondir", copyup.OpMake, copyup.Free},
		{".git/modules/sub/worktrees/wt/commondir", copyup.OpMake, copyup.Free},
		{".git/index.lock", copyup.OpMake, copyup.Free},
		{".git/refs/heads/main", copyup.OpRename, copyup.Free},
		{".git/objects/pack", copyup.OpMakeDir, copyup.Free},
		{"commondir", copyup.OpMake, copyup.Free},
		{"src/commondir", copyup.OpMake, copyup.Free},
	}
	if !m.Watched("commondir") {
		t.Fatal("commondir is not watched: its calls never reach Judge")
	}
	for _, tt := range tests {
		if got := m.Judge(root+"/"+tt.path, tt.op); got != tt.want {
			t.Errorf("Judge(%s, %v) = %v, want %v", tt.path, tt.op, got, tt.want)
		}
	}
	// A root whose .git is a worktree's file: its commondir is elsewhere.
	m = &mounter{spec: m.spec, gitAtStart: true}
	if got := m.Judge(root+"/.git", copyup.OpRename); got != copyup.Free {
		t.Errorf("with a .git file: Judge(.git, rename) = %v, want Free", got)
	}
}
