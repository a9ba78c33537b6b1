package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// TestProcAndFdPaths pins root cause 1 of issue 10: a path through /dev/fd,
// /proc/self/fd or /proc/*/cwd|root is resolved before it is judged, and only
// a descriptor written exactly (/dev/fd/3) is the command's own.
func TestProcAndFdPaths(t *testing.T) {
	l := newLab(t)
	// A link inside the root to a /dev/fd path that climbs out of it.
	if err := os.Symlink("/dev/fd/../../.."+l.outside, filepath.Join(l.root, "fdesc")); err != nil {
		t.Fatal(err)
	}
	checkDefaults(t, l, []decisionCase{
		{"rm -rf /dev/fd/../../..$OUTSIDE/sub", deny, ""},
		{"rm -f /dev/fd/../../..$OUTSIDE/victim", deny, "confinement"},
		{"rm -f /dev/fd/3/../../../..$OUTSIDE/victim", deny, "confinement"},
		{"tee /proc/self/fd/../../..$OUTSIDE/PWNED < README.md", deny, "confinement"},
		{"tee /proc/thread-self/fd/../../../..$OUTSIDE/PWNED < README.md", deny, "confinement"},
		{"cp a.txt /proc/self/fd/..//../..$OUTSIDE/x", deny, "confinement"},
		{"echo b > /dev/fd/../../../proc/sysrq-trigger", deny, "catastrophic"},
		{"echo b >> /proc/self/fd/../../sysrq-trigger", deny, "catastrophic"},
		{"dd if=a.txt of=/dev/fd/../../../dev/sda", deny, "catastrophic"},
		{"ln -s /dev/fd/../../..$OUTSIDE esc2 && echo pwned > esc2/PWNED", deny, "confinement"},
		{"ln -s /proc/self/root$OUTSIDE esc3", deny, "confinement"},
		{"echo x > fdesc/PWNED", deny, "confinement"},
		// Climbing out of a directory that does not exist yet back onto a link.
		{"mkdir -p nothere/../fdesc/x", deny, "confinement"},
		{"touch nothere/a/../../fdesc/y", deny, "confinement"},
		{"echo x > /proc/self/root$OUTSIDE/victim", deny, "confinement"},
		{"echo x > /proc/1/root$OUTSIDE/victim", deny, "confinement"},
		{"echo x > /proc/self/cwd/../victim", deny, "confinement"},
		{"touch /proc/$$/cwd/x", ask, "dynamic"},
		{"cd /proc/self/root$OUTSIDE", deny, "confinement"},
		{"cd /dev/fd/../../..$OUTSIDE", deny, "confinement"},
		// The command's own descriptors stay harmless.
		{"echo hi > /dev/fd/2", allow, ""},
		{"echo hi > /proc/self/fd/1", allow, ""},
		{"echo hi >> /dev/stderr", allow, ""},
		{"sort -o /dev/stdout a.txt", allow, ""},
		{"tee /dev/fd/3 < a.txt 3>/dev/null", allow, ""},
	})
}

// TestReasonsHideOutsidePaths: a refusal names the path as written, never
// where a link outside the root leads.
func TestReasonsHideOutsidePaths(t *testing.T) {
	l := newLab(t)
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(l.outside, "secret-target-name")
	if err := os.MkdirAll(secret, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(l.root, "link")); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"touch link/x", "rm -rf link/", "echo x > link/y", "cd link && touch z", "cp a.txt link", "git -C link status", "make -C link"} {
		v := e.Check(cmd, l.env())
		if v.Decision != policy.Deny {
			t.Errorf("%q: got %s, want deny", cmd, v.Decision)
		}
		if strings.Contains(v.Reason, "secret-target-name") {
			t.Errorf("%q: the reason reveals the link's target: %s", cmd, v.Reason)
		}
	}
}
