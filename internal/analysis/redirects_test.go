package analysis

import (
	"testing"
)

// A statement that is only redirections, or a compound command's redirections,
// becomes a Redirs command carrying them: the file is written even though no
// program is named, and the policy must see it.
func TestRedirectsOnly(t *testing.T) {
	tests := []struct {
		src    string
		op     string
		target string
	}{
		{"> out.txt", ">", "out.txt"},
		{">> log", ">>", "log"},
		{"{ echo a; echo b; } > both.txt", ">", "both.txt"},
		{"( echo a ) 2> err.txt", "2>", "err.txt"},
		{"while false; do :; done > loop.txt", ">", "loop.txt"},
		{"if true; then echo x; fi >> '/abs path'", ">>", "/abs path"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			a, err := Analyze(tt.src, Options{Root: "/r", Dir: "/r", Home: "/h", Resolve: func(p string) string { return p }})
			if err != nil {
				t.Fatal(err)
			}
			var found *Command
			for i, c := range a.Commands {
				if c.Kind == Redirs {
					found = &a.Commands[i]
					break
				}
			}
			if found == nil {
				t.Fatalf("no redirection-only command among %+v", a.Commands)
			}
			if len(found.Redirects) != 1 || found.Redirects[0].Target != tt.target || found.Redirects[0].Op != tt.op || found.Source == "" {
				t.Errorf("%+v", *found)
			}
		})
	}
}

// A plain command's redirections stay with it: no separate Redirs command.
func TestRedirectsStayWithTheirCommand(t *testing.T) {
	a, err := Analyze("echo hi > out.txt", Options{Root: "/r", Dir: "/r", Home: "/h", Resolve: func(p string) string { return p }})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range a.Commands {
		if c.Kind == Redirs {
			t.Errorf("separate Redirs command %+v", c)
		}
	}
	if len(a.Commands) != 1 || len(a.Commands[0].Redirects) != 1 || a.Commands[0].Redirects[0].Target != "out.txt" {
		t.Errorf("%+v", a.Commands)
	}
}
