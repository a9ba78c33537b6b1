package analysis

import (
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/corpus"
)

// legitCorpus reads the commands of a file of testdata/corpus.
func legitCorpus(tb testing.TB, name string) []string {
	var out []string
	for _, r := range corpus.Read(tb, name) {
		cmd := strings.NewReplacer("$ROOT", "/work/lab/root", "$OUTSIDE", "/work/lab/outside", "PORT", "18081").Replace(r.Command())
		out = append(out, cmd)
	}
	return out
}

// FuzzAnalyze: no input panics, and what comes out is consistent.
func FuzzAnalyze(f *testing.F) {
	for _, name := range []string{"legit.tsv", "attacks.tsv"} {
		for _, c := range legitCorpus(f, name) {
			f.Add(c)
		}
	}
	f.Fuzz(func(t *testing.T, src string) {
		a, err := Analyze(src, Options{Root: "/r", Dir: "/r/sub", Home: "/h", Resolve: func(p string) string { return p }})
		if err != nil {
			return
		}
		lines := strings.Count(src, "\n") + 1
		for _, c := range a.Commands {
			if len(c.Args) != len(c.Flags) {
				t.Fatalf("%q: %d args but %d flags", src, len(c.Args), len(c.Flags))
			}
			if c.Pos.Line < 1 || c.Pos.Line > lines {
				t.Fatalf("%q: position %v outside the input", src, c.Pos)
			}
			if c.Kind == Simple && !c.Dynamic && c.Name == "" && c.Path != "" && !strings.HasSuffix(c.Path, "/") {
				t.Fatalf("%q: static command %q without a name", src, c.Path)
			}
			for _, i := range c.Feeds {
				if i < 0 || i >= len(a.Commands) {
					t.Fatalf("%q: feed %d out of range", src, i)
				}
			}
		}
	})
}

// BenchmarkAnalyzeLegit measures parsing and extraction over the legit corpus.
func BenchmarkAnalyzeLegit(b *testing.B) {
	cmds := legitCorpus(b, "legit.tsv")
	o := Options{Root: "/work/lab/root", Home: "/work/lab/outside/home", Resolve: func(p string) string { return p }}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Analyze(cmds[i%len(cmds)], o); err != nil {
			b.Fatal(err)
		}
	}
}
