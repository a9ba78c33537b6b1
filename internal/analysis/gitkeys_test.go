package analysis

import (
	"strings"
	"testing"
)

// TestGitKeyExamples checks every entry of the git key table against its
// examples: each match pair is of the entry's kind, each notMatch pair is not
// (another entry may still give it another kind).
func TestGitKeyExamples(t *testing.T) {
	for _, k := range gitKeys {
		if len(k.match) == 0 {
			t.Errorf("%s.%s: no match example", k.section, k.name)
		}
		for _, kv := range k.match {
			key, val, _ := strings.Cut(kv, "=")
			if GitKey(strings.ToLower(key), val)&k.kind == 0 {
				t.Errorf("%s.%s: match example %q is not of its kind %d", k.section, k.name, kv, k.kind)
			}
		}
		for _, kv := range k.notMatch {
			key, val, _ := strings.Cut(kv, "=")
			if GitKey(strings.ToLower(key), val)&k.kind != 0 {
				t.Errorf("%s.%s: notMatch example %q is of its kind %d", k.section, k.name, kv, k.kind)
			}
		}
	}
}

// TestGitKeysCoverProtectedPaths: the keys whose paths internal/protect
// keeps read-only in the root (core.hooksPath, a core.fsmonitor script,
// include and includeIf paths) are keys the table says make git run or read
// something from elsewhere, so the policy asks where the sandbox protects.
func TestGitKeysCoverProtectedPaths(t *testing.T) {
	for _, kv := range []string{"core.hookspath=.githooks", "core.fsmonitor=./watch.sh", "include.path=x.inc", "includeif.gitdir:/x/.path=x.inc"} {
		key, val, _ := strings.Cut(kv, "=")
		if GitKey(key, val)&(GitRuns|GitRedirects) == 0 {
			t.Errorf("%s: neither runs nor redirects", kv)
		}
	}
}
