package config

import (
	"strings"
	"testing"
)

// Any bytes: an error or a config, never a panic or a hang, and every error names the
// file.
func FuzzParseFile(f *testing.F) {
	for _, seed := range []string{
		"",
		"[policy]\nnetwrok = true\n",
		"policy = { deny = [\"rm *\"], mode = \"never\" }\n",
		"[limits]\ndefault_timeout = \"90s\"\noutput_limit = \"50KB\"\n",
		"[env]\nA = \"1\"\n[secrets]\nkeep = [\"A\"]\n",
		"a.b.c = 1\n[[x]]\n",
		"[limits]\nspill_max = 1e99\n",
		"root = \"~\"\n[policy]\nwritable = [\"~/x\", \"../y\"]\n",
		"[policy]\nmode = never # a comment\ndeny = [git push *, \"x\"]\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		pf, err := parseFile("fuzz.toml", []byte(doc))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.toml") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		pf.abs = "/project/fuzz.toml"
		var src Sources
		m := merger{cfg: defaults("/project"), home: "/home/u", src: &src}
		for _, trusted := range []bool{false, true} {
			if err := m.apply(pf, trusted); err != nil {
				if !strings.HasPrefix(err.Error(), "fuzz.toml") {
					t.Fatalf("error does not name the file: %v", err)
				}
				return
			}
		}
		_ = m.finish()
	})
}
