package policy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/policy"
)

// TestAnalysisCostIsBounded: pathological lines are refused quickly with a
// reason that says why, instead of holding a CPU for minutes (a 129 KB line of
// nested $( once took 122 s).
func TestAnalysisCostIsBounded(t *testing.T) {
	l := newLab(t)
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for name, cmd := range pathological() {
		start := time.Now()
		v := e.Check(cmd, l.env())
		took := time.Since(start)
		if v.Decision != policy.Deny || v.Rule != "parse" || !strings.Contains(v.Reason, "too costly to analyse") {
			t.Errorf("%s: got %s (%s): %.200s; want a deny for cost", name, v.Decision, v.Rule, v.Reason)
		}
		// Generous: the bound is about minutes versus milliseconds, on a
		// machine that may be loaded and under -race.
		if took > 20*time.Second {
			t.Errorf("%s: took %v", name, took)
		}
	}
	// A deep but reasonable line is still analysed.
	if v := e.Check(strings.Repeat("$(", 100)+"echo"+strings.Repeat(")", 100), l.env()); v.Decision == policy.Deny {
		t.Errorf("100 nested $(: %s: %s", v.Decision, v.Reason)
	}
}

// pathological are lines built to make the analysis expensive.
func pathological() map[string]string {
	return map[string]string{
		"129 KB of nested $(":       strings.Repeat("$(", 129<<10/2),
		"nested $( closed":          strings.Repeat("$(", 20000) + "x" + strings.Repeat(")", 20000),
		"nested subshells":          strings.Repeat("(", 50000) + "true" + strings.Repeat(")", 50000),
		"nested braces":             strings.Repeat("{ ", 50000) + "true;" + strings.Repeat(" }", 50000),
		"nested arithmetic":         "echo $((" + strings.Repeat("(", 50000) + "1" + strings.Repeat(")", 50000) + "))",
		"nesting hidden in bash -c": "bash -c $'" + strings.Repeat(`\x28`, 20000) + "'",
		"nesting in a double quote": `echo "` + strings.Repeat("$(", 10000) + `"`,
		"over the input size":       strings.Repeat("true;", 300000),
	}
}

// BenchmarkCheckPathological times the refusal of each pathological line (issue
// 10: under 100 ms each), beside an ordinary line as the baseline.
func BenchmarkCheckPathological(b *testing.B) {
	l := newLab(b)
	e, _ := policy.New(policy.Settings{})
	cases := pathological()
	cases["baseline: git status"] = "git status"
	for name, cmd := range cases {
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				e.Check(cmd, l.env())
			}
		})
	}
}
