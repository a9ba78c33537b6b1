package gitstate

import "testing"

// What git writes into a repository it makes or clones passes; a key that
// runs or follows something, however it is spelled, is named.
func TestConfigUnknown(t *testing.T) {
	for data, want := range map[string]string{
		"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n\tworktree = ../../../sub\n[remote \"origin\"]\n\turl = /x/sub\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n": "",
		"[core]\n\tfsmonitor = touch x\n":                         "core.fsmonitor",
		"[Core]\n\tFSMonitor = touch x\n":                         "core.fsmonitor",
		"[core] fsmonitor = x\n":                                  "core.fsmonitor",
		"[core \"x\"]\n\tbare = false\n":                          "core.bare",
		"[remote]\n\turl = x\n":                                   "remote.url",
		"[remote.origin]\n\turl = x\n\tuploadpack = sh -c x\n":    "remote.uploadpack",
		"[include]\n\tpath = ../x\n":                              "include.path",
		"[filter \"lfs\"]\n\tclean = x\n":                         "filter.clean",
		"[core]\n\tbare = false \\\n[remote \"o\"]\n\turl = x\n":  "core.url", // the header is bare's value
		"[core]\n\tbare = false \\\n\tfsmonitor = x\nhookspath=y": "core.hookspath",
		"[core\n":         "[core",
		"fsmonitor = x\n": ".fsmonitor",
		"# [core]\n; fsmonitor\n[user]\n\temail = a@b\n": "",
		"[core]\n\tsshCommand\n":                         "core.sshcommand",
	} {
		if got := ConfigUnknown([]byte(data)); got != want {
			t.Errorf("ConfigUnknown(%q) = %q, want %q", data, got, want)
		}
	}
}
