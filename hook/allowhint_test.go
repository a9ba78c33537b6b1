package hook

import (
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/shellgate/shellgate/policy"
)

// The pattern an ask's reason names is TOML 1.0 the user can paste into the
// user file, control characters and all.
func TestAllowHintIsTOML(t *testing.T) {
	for _, pattern := range []string{"docker run alpine true", "docker run alpine '\x1b[31m' a\x7f", `python3 -c "print('\"')"`} {
		got := allowHint(policy.Verdict{AllowPattern: pattern}, "Add")
		_, line, _ := strings.Cut(got, "[policy] ")
		line, _, ok := strings.Cut(line, " to ")
		var doc struct{ Policy struct{ Allow []string } }
		if err := toml.Unmarshal([]byte("[policy]\n"+line+"\n"), &doc); !ok || err != nil || len(doc.Policy.Allow) != 1 || doc.Policy.Allow[0] != pattern || strings.Contains(line, `\x`) {
			t.Errorf("%q: %s reads as %q (%v), want it in TOML 1.0", pattern, got, doc.Policy.Allow, err)
		}
	}
}
