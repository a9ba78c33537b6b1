package policy_test

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/shellgate/shellgate/policy"
)

// FuzzCheck: no input panics or hangs, and a denied command stays denied when
// embedded after ";", inside $(…), inside bash -c '…', and behind a wrapper.
func FuzzCheck(f *testing.F) {
	l := newLab(f)
	for _, name := range []string{"attacks.tsv", "attacks-review.tsv", "legit.tsv"} {
		for _, r := range readCorpus(f, name, l) {
			f.Add(r.command)
		}
	}
	for _, s := range []string{"", "'", "$(", "rm -rf /", "a=r;b=m;$a$b /", ":(){ :|:& };:", "cd ~-", "echo ${x@P}", "x[$(y)]=1", "eval eval eval x",
		"sqlite3 x '.once |a' '.output' '.shell'", "ex -c '!' -c", "parallel ::: a", "parallel a :::", "fd -x", "awk 'print >'",
		"npm exec --", "direnv exec", "env -S", "git -c", "tar cf", "xargs -J", "read -a", "export {A,B}=", "script -q f"} {
		f.Add(s)
	}
	e, err := policy.New(policy.Settings{})
	if err != nil {
		f.Fatal(err)
	}
	env := l.env()
	f.Fuzz(func(t *testing.T, s string) {
		v := e.Check(s, env)
		switch v.Decision {
		case policy.Allow, policy.Ask, policy.Deny:
		default:
			t.Fatalf("%q: decision %q", s, v.Decision)
		}
		if v.Decision != policy.Allow && (v.Rule == "" || v.Reason == "") {
			t.Fatalf("%q: %s without rule or reason: %+v", s, v.Decision, v)
		}
		if v.Decision != policy.Deny {
			return
		}
		embedded := embeddings(s)
		if v.Rule == "parse" {
			// Text that does not parse is not a command: spliced into another
			// line it can close that line's $( and mean something else. Quoted,
			// it stays the same text and must be refused the same way.
			embedded = quotedEmbeddings(s)
		}
		for _, embedded := range embedded {
			if w := e.Check(embedded, env); w.Decision != policy.Deny {
				t.Fatalf("%q is denied (%s: %s)\nbut %q is %s (%s: %s)", s, v.Rule, v.Reason, embedded, w.Decision, w.Rule, w.Reason)
			}
		}
	})
}

// embeddings are command lines that run s somewhere inside.
func embeddings(s string) []string {
	out := append([]string{"true; " + s, "echo $(" + s + "\n)"}, quotedEmbeddings(s)...)
	if simpleCommand(s) {
		for _, w := range []string{"timeout 5", "env", "nice -n 5", "command", "nohup", "stdbuf -o0", "time", "setsid"} {
			out = append(out, w+" "+s)
		}
	}
	return out
}

// quotedEmbeddings run s as a string that a shell re-parses.
func quotedEmbeddings(s string) []string {
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		return nil
	}
	return []string{"bash -c " + q, "eval " + q, "sh -c " + q + " _ x"}
}

// simpleCommand reports whether s is one simple command with a literal name, so
// that a wrapper can be put in front of it.
func simpleCommand(s string) bool {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	if err != nil || len(f.Stmts) != 1 || f.Stmts[0].Background || f.Stmts[0].Negated {
		return false
	}
	c, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	// A name starting with - or + would be read by the wrapper as its own option.
	return ok && len(c.Args) > 0 && len(c.Assigns) == 0 && c.Args[0].Lit() != "" && !strings.ContainsAny(c.Args[0].Lit(), "=\\") &&
		!strings.HasPrefix(c.Args[0].Lit(), "-") && !strings.HasPrefix(c.Args[0].Lit(), "+")
}

func TestEmbeddedDenials(t *testing.T) {
	l := newLab(t)
	e, _ := policy.New(policy.Settings{})
	for _, r := range readCorpus(t, "attacks.tsv", l) {
		v := e.Check(r.command, l.env())
		if v.Decision != policy.Deny {
			continue
		}
		for _, emb := range embeddings(r.command) {
			if w := e.Check(emb, l.env()); w.Decision != policy.Deny {
				t.Errorf("attacks.tsv:%d denied, but %q is %s (%s: %s)", r.line, emb, w.Decision, w.Rule, w.Reason)
			}
		}
	}
}

// BenchmarkCheckLegit measures whole policy checks over the legit corpus.
func BenchmarkCheckLegit(b *testing.B) {
	l := newLab(b)
	rows := readCorpus(b, "legit.tsv", l)
	e, _ := policy.New(policy.Settings{})
	env := l.env()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Check(rows[i%len(rows)].command, env)
	}
}
