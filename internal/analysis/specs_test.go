package analysis

import (
	"slices"
	"testing"
)

// Every grammar builds, once: specFor hands out the same one each time, so a
// program's options are parsed the same way by every check.
func TestEveryGrammarBuildsOnce(t *testing.T) {
	for name := range specMakers() {
		s, ok := specFor(name)
		if !ok || s == nil {
			t.Errorf("specFor(%q) = %v, %v", name, s, ok)
			continue
		}
		if again, _ := specFor(name); again != s {
			t.Errorf("specFor(%q) built a second grammar", name)
		}
		if !KnownProgram(name) {
			t.Errorf("KnownProgram(%q) = false for a program with a grammar", name)
		}
	}
	if s, ok := specFor("no-such-program"); ok || s != nil {
		t.Errorf("specFor(no-such-program) = %v, %v", s, ok)
	}
}

// A grammar is what decides an option's value: the lazily built one parses as
// a command sees it.
func TestGrammarsParseOnFirstUse(t *testing.T) {
	for _, tc := range []struct {
		src      string
		opt      string
		want     string
		operands []string
	}{
		{"rm -r --interactive=never a b", "interactive", "never", []string{"a", "b"}},
		{"tar -C /tmp -xf x.tar", "C", "/tmp", nil},
		{"make -C sub all", "C", "sub", []string{"all"}},
	} {
		a, err := Analyze(tc.src, Options{Root: "/r"})
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		c := a.Commands[0]
		if !c.Parsed {
			t.Errorf("%s: not parsed with a grammar", tc.src)
		}
		if v := c.Values(tc.opt); len(v) != 1 || v[0].Value != tc.want {
			t.Errorf("%s: -%s = %v, want %q", tc.src, tc.opt, v, tc.want)
		}
		if tc.operands != nil {
			var got []string
			for _, i := range c.Operands {
				got = append(got, c.Args[i])
			}
			if !slices.Equal(got, tc.operands) {
				t.Errorf("%s: operands %q, want %q", tc.src, got, tc.operands)
			}
		}
	}
}

// Every directory option a grammar names takes a value, spelled either way:
// one that read as a flag would record no directory, and a command given it
// would be judged where it started, not where it works.
func TestChdirOptionsTakeADirectory(t *testing.T) {
	for name := range specMakers() {
		s, _ := specFor(name)
		for _, o := range s.Chdir {
			spell := [][]string{{"-" + o, "/o"}, {"-" + o + "/o"}}
			if len(o) > 1 {
				spell = [][]string{{"--" + o, "/o"}, {"--" + o + "=/o"}}
			}
			for _, args := range spell {
				c := Command{Name: name, Args: args, Flags: make([]ArgFlag, len(args))}
				c.ParseOpts()
				if v := c.Values(s.Chdir...); len(v) != 1 || v[0].Value != "/o" {
					t.Errorf("%s %v: directory options %v read %+v, want /o", name, args, s.Chdir, v)
				}
			}
		}
	}
}
