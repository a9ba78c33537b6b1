package policy_test

import (
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// $TMPDIR, $TMP and $TEMP are the temp dir the command will get, unless the line
// assigns them.
func TestTempDirVariables(t *testing.T) {
	root, tmp := t.TempDir(), t.TempDir()
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	env := policy.Env{Root: root, Home: t.TempDir(), TempDir: tmp}
	for cmd, want := range map[string]policy.Decision{
		`echo x > "$TMPDIR/f"`:               policy.Allow,
		`cd "$TMPDIR" && touch f`:            policy.Allow,
		`mkdir -p $TMP/a && cp go.mod $TEMP`: policy.Allow,
		`TMPDIR=/etc; echo x > "$TMPDIR/f"`:  policy.Deny,
		`echo x > "$TMPDIR/../f"`:            policy.Deny,
	} {
		if v := e.Check(cmd, env); v.Decision != want {
			t.Errorf("%s: %s (%s), want %s", cmd, v.Decision, v.Reason, want)
		}
	}
	if v := e.Check(`echo x > "$TMPDIR/f"`, policy.Env{Root: root}); v.Decision == policy.Allow {
		t.Errorf("without a temp dir $TMPDIR is unknown, yet allowed")
	}
}

// Env.Vars are known values too: a program named through one is no longer dynamic,
// and the temp dir still wins for its own variables.
func TestKnownVariables(t *testing.T) {
	root, tmp := t.TempDir(), t.TempDir()
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"PROJECT": root, "TMPDIR": "/etc"}
	env := policy.Env{Root: root, Home: t.TempDir(), TempDir: tmp, Vars: vars}
	for cmd, want := range map[string]policy.Decision{
		`"$PROJECT"/hooks/check.sh`:     policy.Allow,
		`"$OTHER"/hooks/check.sh`:       policy.Ask,
		`echo x > "$PROJECT/../f"`:      policy.Deny,
		`echo x > "$TMPDIR/f"`:          policy.Allow,
		`echo x > "${PROJECT}/out.txt"`: policy.Allow,
	} {
		if v := e.Check(cmd, env); v.Decision != want {
			t.Errorf("%s: %s (%s), want %s", cmd, v.Decision, v.Reason, want)
		}
	}
	if vars["TMPDIR"] != "/etc" {
		t.Error("Check changed the caller's Vars")
	}
}
