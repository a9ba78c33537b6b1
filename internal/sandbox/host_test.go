package sandbox

import (
	"testing"
)

// A project in /tmp gets a temp dir of its own there: the policy lets
// commands write the temp dir, not the root's parents.
func TestSessionTemp(t *testing.T) {
	for root, want := range map[string]string{"/work/p": "/tmp", "/tmp": "/tmp/shellgate-tmp", "/tmp/p": "/tmp/shellgate-tmp", "/tmpx/p": "/tmp"} {
		if got := SessionTemp(root); got != want {
			t.Errorf("SessionTemp(%s) = %s, want %s", root, got, want)
		}
	}
}
