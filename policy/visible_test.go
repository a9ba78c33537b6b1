package policy_test

import (
	"testing"

	"github.com/shellgate/shellgate/policy"
)

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"git status":                         "git status",
		"rm -rf ~\rgit status":               `rm -rf ~\rgit status`,
		"rm -rf ~ \x1b[2K\x1b[1Ggit status":  `rm -rf ~ \e[2K\e[1Ggit status`,
		"rm -rf ~\b\b\b\b\b\b\b\bgit status": `rm -rf ~\x08\x08\x08\x08\x08\x08\x08\x08git status`,
		"echo \u202egnp.exe":                 `echo \u202Egnp.exe`,
		"rm\u200b -rf":                       `rm\u200B -rf`,
		"a\nb\tc":                            "a\nb\tc",
		"\x9b31m":                            `\x9b31m`,
		"\u009b31m":                          `\u009B31m`,
		"bad \xff utf8":                      `bad \xff utf8`,
		"éè 中文":                              "éè 中文",
	} {
		if got := policy.Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}
