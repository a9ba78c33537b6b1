package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// What git init and clone write is plain; any key that can run a program, or
// anything the parser does not follow, is not.
func TestPlainGitConfig(t *testing.T) {
	for _, c := range []struct {
		config string
		plain  bool
	}{
		{"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n", true},
		{"[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = https://example.com/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"release/v1.2\"]\n\tremote = origin\n\tmerge = refs/heads/release/v1.2\n", true},
		{"# a comment\n[user]\n\tname = A\n\temail = a@example.com\n", true},
		{"[core]\n\tfsmonitor = touch /tmp/x\n", false},
		{"[core]\n\thooksPath = /tmp/hooks\n", false},
		{"[core]\n\tsshCommand = sh -c evil\n", false},
		{"[include]\n\tpath = /tmp/evil\n", false},
		{"[includeIf \"gitdir:/\"]\n\tpath = /tmp/evil\n", false},
		{"[alias]\n\tst = !sh -c evil\n", false},
		{"[filter \"x\"]\n\tclean = evil\n", false},
		{"[diff \"x\"]\n\ttextconv = evil\n", false},
		{"[core]\n\trepositoryformatversion = 0 \\\n\tfsmonitor = evil\n", false},
		{"[core] fsmonitor = evil\n", false},
		{"[remote.origin]\n\turl = x\n", true},
		{"[remote \"a\\\"b\"]\n\turl = x\n", false},
		{"[core\n", false},
		{"[commit]\n\tgpgsign = false\n[tag]\n\tgpgSign = false\n[diff]\n\trenames = true\n", true}, // a test fixture's
		{"[gpg]\n\tprogram = evil\n", false},
		{"[diff]\n\texternal = evil\n", false},
	} {
		p := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(p, []byte(c.config), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := plainGitConfigAt(unix.AT_FDCWD, p); got != c.plain {
			t.Errorf("plainGitConfigAt(%q) = %v", c.config, got)
		}
	}
}
