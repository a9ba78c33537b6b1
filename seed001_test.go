package shellgate_test

import (
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
)

// Seed 001 §5.6: every command gets MYCODEAGENT=1 (scripts turn interactive
// prompts off by it), unless the configuration gives it another value.
func TestSeed001MyCodeAgent(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{nil, "1"},
		{map[string]string{"OTHER": "x"}, "1"},
		{map[string]string{"MYCODEAGENT": "0"}, "0"},
	} {
		g := gate(t, shellgate.Config{Root: l.root, Env: tc.env})
		env := run(t, g, shellgate.Request{Command: `printf %s "$MYCODEAGENT"`})
		if env.Data.Stdout != tc.want {
			t.Errorf("Env %v: MYCODEAGENT=%q, want %q\n%s", tc.env, env.Data.Stdout, tc.want, env.Text)
		}
	}
}
