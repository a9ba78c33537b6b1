package analysis

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// summary renders what a command runs: "rm -f x", with wrappers as "[env] rm".
func summary(c Command) string {
	s := c.Name
	if c.Dynamic {
		s = "<dynamic:" + c.Path + ">"
	}
	if c.Kind == Assign && c.Name != "" {
		return c.Name + " " + strings.Join(c.Args, " ")
	}
	if c.Kind == Assign && c.Name == "" {
		var as []string
		for _, a := range c.Assigns {
			as = append(as, a.Name+"="+a.Value)
		}
		s = strings.Join(as, " ")
	}
	if c.Kind == Redirs {
		s = "<redirects>"
	}
	if len(c.Args) > 0 && c.Kind != Assign {
		s += " " + strings.Join(c.Args, " ")
	}
	if len(c.Via) > 0 {
		s = "[" + strings.Join(c.Via, ",") + "] " + s
	}
	return s
}

func TestAnalyzeExtractsEveryCommand(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{"git status", []string{"git status"}},
		{"a; b && c || d\ne", []string{"a", "b", "c", "d", "e"}},
		{"a | b |& c", []string{"a", "b", "c"}},
		{"(a; { b; })", []string{"a", "b"}},
		{"echo $(a) `b` <(c) >(d)", []string{"a", "b", "c", "d", "echo $(a) `b` <(c) >(d)"}},
		{"cat <<EOF\n$(a)\nEOF", []string{"a", "cat"}},
		{"cat <<'EOF'\n$(a)\nEOF", []string{"cat"}},
		{"f() { a; }; f", []string{"a", "f", "[f()] a"}},                                                // the body, then again where it is called
		{`f() { a "$1" $2 "$3"; }; f x 'y z'`, []string{`a "$1" $2 "$3"`, "f x y z", "[f()] a x y z "}}, // $2 split, "$3" empty
		{`f() { a "$2"; }; f $X y`, []string{`a "$2"`, "f $X y", `[f()] a "$2"`}},                       // $X may be any number of words
		{`set -- x; a "$1"; shift; a "$1"`, []string{"set -- x", "a x", "shift", `a "$1"`}},
		{`sh -c '$0 "$1" "$2"' a b`, []string{`sh -c $0 "$1" "$2" a b`, "[sh -c] a b "}},
		{"if a; then b; elif c; then d; else e; fi", []string{"a", "b", "c", "d", "e"}},
		{"for x in $(a); do b; done; while c; do d; done; until e; do :; done", []string{"a", "b", "c", "d", "e", ":"}},
		{"case $(a) in x) b;; *) c;; esac", []string{"a", "b", "c"}},
		{"[[ -f $(a) ]]", []string{"a"}},
		{"echo $(( $(a) + 1 ))", []string{"a", "echo $(( $(a) + 1 ))"}},
		{"export X=$(a); local Y=$(b)", []string{"a", "export X=$(a)", "b", "local Y=$(b)"}},
		{"a[$(b)]=1", []string{"b", "a=1"}},
		{"echo ${x:-$(a)}", []string{"a", "echo ${x:-$(a)}"}},
		{"coproc a", []string{"a"}},
		{"time a", []string{"a"}},
		{"! a", []string{"a"}},
		// Quote removal and normalisation.
		{`'r''m' "x" \y`, []string{"rm x y"}},
		{`\rm -r\f z`, []string{"rm -rf z"}},
		{"/usr/bin/rm x", []string{"rm x"}},
		{`$'\x72\x6d' x`, []string{"rm x"}},
		{"r$()m x", []string{"rm x"}},
		{"r\\\nm x", []string{"rm x"}},
		{"a=r; b=m; $a$b x", []string{"a=r", "b=m", "rm x"}},
		// GNU programs installed beside the system's, with a "g" (Homebrew's gnubin).
		{"grm -rf x; /opt/homebrew/bin/gcp a b; gmake -C s", []string{"rm -rf x", "cp a b", "make -C s"}},
		{"gxargs grm -f", []string{"xargs grm -f", "[xargs] rm -f"}},
		{"gzip x; gunzip y; gcc z; git w", []string{"gzip x", "gunzip y", "gcc z", "git w"}}, // other programs
		{"echo {a,b}c", []string{"echo ac bc"}},
		// Dynamic command names.
		{"$x y", []string{"<dynamic:$x> y"}},
		{"$(a) y", []string{"a", "<dynamic:$(a)> y"}},
		{"r* y", []string{"<dynamic:r*> y"}},
		// Wrappers.
		{"env -i A=1 /usr/bin/rm x", []string{"env -i A=1 /usr/bin/rm x", "[env] rm x"}},
		{"command rm x; builtin cd; exec rm y", []string{"command rm x", "[command] rm x", "builtin cd", "[builtin] cd", "exec rm y", "[exec] rm y"}},
		{"nohup nice -n 5 ionice -c3 timeout -s KILL 5 stdbuf -o0 setsid rm x", []string{
			"nohup nice -n 5 ionice -c3 timeout -s KILL 5 stdbuf -o0 setsid rm x",
			"[nohup] nice -n 5 ionice -c3 timeout -s KILL 5 stdbuf -o0 setsid rm x",
			"[nohup,nice] ionice -c3 timeout -s KILL 5 stdbuf -o0 setsid rm x",
			"[nohup,nice,ionice] timeout -s KILL 5 stdbuf -o0 setsid rm x",
			"[nohup,nice,ionice,timeout] stdbuf -o0 setsid rm x",
			"[nohup,nice,ionice,timeout,stdbuf] setsid rm x",
			"[nohup,nice,ionice,timeout,stdbuf,setsid] rm x"}},
		{"sudo -u root rm x", []string{"sudo -u root rm x", "[sudo] rm x"}},
		{"xargs -0 rm -f", []string{"xargs -0 rm -f", "[xargs] rm -f"}},
		{"find . -name x -exec rm {} \\; -execdir sh -c 'a' \\;", []string{"find . -name x -exec rm {} ; -execdir sh -c a ;", "[find -exec] rm ./x", "[find -execdir] sh -c a", "[find -execdir,sh -c] a"}},
		{"bash -c 'a; b'", []string{"bash -c a; b", "[bash -c] a", "[bash -c] b"}},
		{"sh -ec 'a'", []string{"sh -ec a", "[sh -c] a"}},
		{"sh <<< 'a'", []string{"sh", "[sh <<<] a"}},
		{"eval 'a;' b", []string{"eval a; b", "[eval] a", "[eval] b"}},
		{"trap 'a' EXIT", []string{"trap a EXIT", "[trap] a", "[trap] a"}}, // where set, and at exit
		{"alias ll='a -l'", []string{"alias ll=a -l", "[alias ll] a -l"}},
		{"git -c core.pager='a x' -c alias.y='!b' log", []string{"git -c core.pager=a x -c alias.y=!b log", "[git -c core.pager] a x", "[git -c alias.y] b"}},
		{"GIT_EDITOR='a x' git commit", []string{"git commit", "[GIT_EDITOR] a x"}},
		{"LESSOPEN='|a %s' less f", []string{"less f", "[LESSOPEN] a %s"}},
		{"tar -xf t --to-command='a'", []string{"tar -xf t --to-command=a", "[tar --to-command] a"}},
		{"flock f -c 'a'", []string{"flock f -c a", "[flock -c] a"}},
		{"busybox su -c a", []string{"busybox su -c a", "[busybox] su -c a", "[busybox,su -c] a"}},
		{"watch -n 1 a b", []string{"watch -n 1 a b", "[watch] a b"}},
		{"git submodule foreach 'a'", []string{"git submodule foreach a", "[git submodule foreach] a"}},
		{"env -S 'a b'", []string{"env -S a b", "[env -S] env a b", "[env -S,env] a b"}}, // the split string is env's arguments again
	}
	for _, tt := range tests {
		a, err := Analyze(tt.src, Options{Root: "/r", Home: "/h"})
		if err != nil {
			t.Errorf("%q: %v", tt.src, err)
			continue
		}
		var got []string
		for _, c := range a.Commands {
			got = append(got, summary(c))
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%q:\n got  %q\n want %q", tt.src, got, tt.want)
		}
	}
}

func TestAnalyzeFindings(t *testing.T) {
	tests := []struct {
		src  string
		want FindingKind // "" for none
	}{
		{"eval \"$x\"", FindEval},
		{"eval 'ls'", ""},
		{"sh -c \"$(a)\"", FindEval},
		{"trap \"$x\" EXIT", FindTrap},
		{"trap - EXIT", ""},
		{"alias a=\"$x\"", FindAlias},
		{"x='a[$(b)]'; echo $((x))", FindArith},
		{"x=5; echo $((x + 1))", ""},
		{"for ((i=0; i<3; i++)); do :; done", ""},
		{"echo $((RANDOM % 6))", ""},
		{"let y", FindArith},
		{"[[ $v -eq 1 ]]", FindArith},
		{"echo ${x@P}", FindPrompt},
		{"echo ${!x}", FindIndirect},
		{"echo ${!pre*}", ""},
		{":(){ :|:& };:", FindForkBomb},
		{"f(){ f & f; }; f", FindForkBomb},
		{"f(){ echo; }; f & f", ""},
		{"curl x | sh", FindStdinShell},
		{"hash -p /bin/rm ls", FindHash},
		{"bash -c 'a \"'", FindParse},
		{strings.Repeat("eval ", 3) + "x", ""},
		{strings.Repeat("eval ", maxDepth+1) + "x", FindDepth},
	}
	for _, tt := range tests {
		a, err := Analyze(tt.src, Options{Root: "/r"})
		if err != nil {
			t.Errorf("%q: %v", tt.src, err)
			continue
		}
		var kinds []FindingKind
		for _, f := range a.Findings {
			kinds = append(kinds, f.Kind)
		}
		if tt.want == "" && len(kinds) > 0 || tt.want != "" && !containsKind(kinds, tt.want) {
			t.Errorf("%q: findings %v, want %q", tt.src, kinds, tt.want)
		}
	}
}

func containsKind(ks []FindingKind, k FindingKind) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

func TestAnalyzeParseErrors(t *testing.T) {
	for _, src := range []string{"echo 'unclosed", "if true; then", "a |", "$(", "echo ${"} {
		if _, err := Analyze(src, Options{}); err == nil {
			t.Errorf("%q: no parse error", src)
		}
	}
	if _, err := Analyze(strings.Repeat("a", MaxInput+1), Options{}); err == nil {
		t.Error("oversized input: no error")
	}
}

// TestAnalyzeTracksDirectories follows cd through a line, with both outcomes of
// every command that may fail.
func TestAnalyzeTracksDirectories(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	for _, d := range []string{"a/b", "sub"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.Symlink(filepath.Join(root, "a", "b"), filepath.Join(root, "link"))
	tests := []struct {
		src  string
		last string // Dirs of the last command, relative to root, joined by ","; "?" unknown
	}{
		{"x", "."},
		{"cd a && x", "a"},
		{"cd a; cd b; x", "a/b,b,a,."}, // either cd may fail
		{"cd a && cd ../sub && x", "sub"},
		{"(cd a); x", "."},
		{"cd a | x; y", "."},
		{"cd a || cd sub; x", "a,sub,."},
		{"cd nope || x", "."},
		{"cd a; x", "a,."}, // cd may fail
		{"cd link && x", "a/b"},
		{"cd $D && x", "?"},
		{"cd && x", "HOME"},
		{"f(){ cd a; }; f; x", "a,."},
		{"f(){ f; }; f; x", "?"},
		{"pushd a && x", "a"},
		{"if true; then cd a; fi && x", "a,."},
		{"env -C a x", "a"},
		{"echo $(cd a); x", "."},
	}
	for _, tt := range tests {
		a, err := Analyze(tt.src, Options{Root: root, Dir: root, Home: filepath.Join(root, "sub")})
		if err != nil {
			t.Fatal(err)
		}
		c := a.Commands[len(a.Commands)-1]
		var got []string
		for _, d := range c.Dirs {
			rel, _ := filepath.Rel(root, d)
			if rel == "sub" && strings.Contains(tt.src, "cd &&") {
				rel = "HOME"
			}
			got = append(got, rel)
		}
		g := strings.Join(got, ",")
		if c.Dirs == nil {
			g = "?"
		}
		if g != tt.last {
			t.Errorf("%q: last command runs in %q, want %q", tt.src, g, tt.last)
		}
	}
}

func TestAnalyzeCdTargets(t *testing.T) {
	tests := []struct {
		src     string
		target  string
		unknown bool
	}{
		{"cd /", "/", false},
		{"cd ..", "/", false},
		{"cd", "/h", false},
		{"cd ~/x", "/h/x", false},
		{"OLDPWD=/o; cd -", "/o", false},
		{"OLDPWD=/o; cd ~-", "/o", false},
		{"cd -", "", true},
		{"cd \"$1\"", "", true},
		{"cd $(dirname $PWD)", "", true},
		{"CDPATH=/o; cd x", "", true},
		{"git -C /o status", "/o", false},
		{"make -C /o", "/o", false},
		{"tar -C /o -xf t", "/o", false},
		{"npm --prefix /o test", "/o", false},
		{"go -C /o build", "/o", false},
		{"gmake -C /o", "/o", false},
		{"patch -d /o -p1", "/o", false},
		{"patch --dir=/o -p1", "/o", false},
		{"ninja -C /o", "/o", false},
		{"just -d /o build", "/o", false},
		{"gradle -p /o build", "/o", false},
		{"./gradlew --project-dir /o build", "/o", false},
	}
	for _, tt := range tests {
		a, err := Analyze(tt.src, Options{Root: "/r", Dir: "/r", Home: "/h", Resolve: func(p string) string { return filepath.Clean(p) }})
		if err != nil {
			t.Fatal(err)
		}
		var found bool
		for _, c := range a.Commands {
			if len(c.Chdir) > 0 || c.ChdirUnknown {
				found = true
				if c.ChdirUnknown != tt.unknown || !tt.unknown && (len(c.Chdir) != 1 || c.Chdir[0] != tt.target) {
					t.Errorf("%q: chdir %v unknown=%v, want %q unknown=%v", tt.src, c.Chdir, c.ChdirUnknown, tt.target, tt.unknown)
				}
			}
		}
		if !found {
			t.Errorf("%q: no directory change recorded", tt.src)
		}
	}
}

func TestAnalyzeFeeds(t *testing.T) {
	a, err := Analyze("curl x | tee f | sh; bash <(wget y); python3 -c \"$(curl z)\"", Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Follow the feeds back: a stage reads the one before it, which reads …
	feeds := map[string][]string{}
	for _, c := range a.Commands {
		queue := append([]int(nil), c.Feeds...)
		seen := map[int]bool{}
		for len(queue) > 0 {
			i := queue[0]
			queue = queue[1:]
			if seen[i] {
				continue
			}
			seen[i] = true
			feeds[c.Name] = append(feeds[c.Name], a.Commands[i].Name)
			queue = append(queue, a.Commands[i].Feeds...)
		}
	}
	for consumer, producer := range map[string]string{"sh": "curl", "bash": "wget", "python3": "curl"} {
		if !strings.Contains(strings.Join(feeds[consumer], ","), producer) {
			t.Errorf("%s is fed by %v, want %s among them", consumer, feeds[consumer], producer)
		}
	}
}

// TestAnalyzeRefusesHiddenComments: the parser takes a # glued to a quote
// inside $(…) for a comment, where bash runs what follows.
func TestAnalyzeRefusesHiddenComments(t *testing.T) {
	for _, src := range []string{"echo $(x'y'#; rm -rf /\n)", "echo `x\"y\"#; rm -rf /`", "echo $(0'\\'#\"\n)"} {
		if _, err := Analyze(src, Options{}); err == nil {
			t.Errorf("%q: no error", src)
		}
	}
	for _, src := range []string{"echo ok # ; rm -rf /", "echo a;#x", "make # build\nls", "echo \"a\"#b", "(ls)\n# done", "echo 'a#b' x#y"} {
		if _, err := Analyze(src, Options{}); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

func TestAnalyzeOutputProcessSubstitutionFeeds(t *testing.T) {
	a, err := Analyze("curl -s x > >(sh)", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Commands) != 2 || a.Commands[0].Name != "sh" || len(a.Commands[0].Feeds) != 1 || a.Commands[a.Commands[0].Feeds[0]].Name != "curl" {
		t.Errorf("sh should read curl's output: %+v", a.Commands)
	}
}

func TestAnalyzeNestedBraces(t *testing.T) {
	for src, want := range map[string]string{
		"echo {a,{b,c}}d": "echo ad bd cd",
		"{,{,}}":          " ",
		"echo x{1..3}":    "echo x{1..3}",
	} {
		a, err := Analyze(src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := a.Commands[len(a.Commands)-1]
		if got := c.Name + " " + strings.Join(c.Args, " "); strings.TrimSpace(got) != strings.TrimSpace(want) {
			t.Errorf("%q: %q, want %q", src, got, want)
		}
	}
}

// TestAnalyzeTruncatedCommands: wrappers and options cut short must not panic.
func TestAnalyzeTruncatedCommands(t *testing.T) {
	for _, src := range []string{"xargs -n", "timeout -s", "nice -n", "sudo -u", "env -u", "env -C", "env -S",
		"flock", "flock f", "flock -w", "find -exec", "find . -exec", "git -C", "git -c", "tar -C", "make -C",
		"go -C", "bash -c", "sh --rcfile", "watch -n", "chroot", "su -c", "time -o", "cd -P", "trap", "alias =",
		"git config", "git submodule foreach", "git bisect run", "rg --pre", "ionice -p 1", "command -v", "exec",
		"pushd", "popd", "eval", "source", ". /dev/stdin", "busybox", "git -c alias.x", "git config alias.x"} {
		if _, err := Analyze(src, Options{Root: "/r"}); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

// TestAnalyzeWordSplitting: unquoted expansions split on blanks and vanish when
// empty, as in bash; quoted ones do not.
func TestAnalyzeWordSplitting(t *testing.T) {
	tests := map[string]string{
		`x="rm -rf /"; $x`:       "rm -rf /",
		`$() rm -f y`:            "rm -f y",
		`x=; $x rm -f y`:         "rm -f y",
		`x="a b"; echo "$x"`:     "echo a b",
		`x="a b"; echo $x`:       "echo a b",
		`echo '' x`:              "echo  x",
		`x='*'; ls $x`:           "ls *",
		"echo $'a\\x00b' c":      "echo a c",
		"bash -c $'rm\\x00 -rf'": "rm",
	}
	for src, want := range tests {
		a, err := Analyze(src, Options{})
		if err != nil {
			t.Fatal(err)
		}
		c := a.Commands[len(a.Commands)-1]
		if got := strings.Join(append([]string{c.Name}, c.Args...), " "); got != want {
			t.Errorf("%q: %q, want %q", src, got, want)
		}
	}
	a, _ := Analyze(`x='*'; ls $x`, Options{})
	if c := a.Commands[1]; c.Flags[0]&ArgGlob == 0 {
		t.Errorf("an unquoted * from a variable is a glob: %+v", c)
	}
	if _, err := Analyze("echo a\x00b", Options{}); err == nil {
		t.Error("a NUL byte in the command: no error")
	}
}

// TestAnalyzeAssignmentTildes: bash expands a tilde after the = of any word
// of an assignment's form and after its colons, arguments included (`dd
// of=~/.bashrc` writes the home's file), not in other words.
func TestAnalyzeAssignmentTildes(t *testing.T) {
	tests := map[string]string{
		`dd if=/dev/zero of=~/.bashrc`: "dd if=/dev/zero of=/h/.bashrc",
		`make DESTDIR=~ install`:       "make DESTDIR=/h install",
		`echo A+=~/x B=x:~/y:~`:        "echo A+=/h/x B=x:/h/y:/h",
		`echo a=x:~/y a_1=~:~`:         "echo a=x:/h/y a_1=/h:/h",
		`echo --p=~/x -c=~ 1a=~ a-b=~`: "echo --p=~/x -c=~ 1a=~ a-b=~",
		`echo "a"=~/x a\=~/x a=\~/x`:   "echo a=~/x a=~/x a=~/x",
		`echo ~/x a=~+/y`:              "echo /h/x a=/w/y",
		`X=x:~/y; echo $X`:             "echo x:/h/y",
	}
	for src, want := range tests {
		a, err := Analyze(src, Options{Home: "/h", Dir: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		c := a.Commands[len(a.Commands)-1]
		if got := strings.Join(append([]string{c.Name}, c.Args...), " "); got != want {
			t.Errorf("%q: %q, want %q", src, got, want)
		}
	}
	for _, src := range []string{`dd of=~"/x"`, `dd of=~$USER/x`, `dd of=~root/x`} {
		a, _ := Analyze(src, Options{Home: "/h"})
		if c := a.Commands[0]; c.Flags[0]&ArgDynamic == 0 {
			t.Errorf("%q: %q not dynamic", src, c.Args[0])
		}
	}
}

// TestAnalyzeNotUTF8: bytes that are not UTF-8 are analysed as bash takes
// them, and every string and column of the result is the line's own; a line
// that also holds a rune of those that stand for such bytes is refused,
// naming the first byte, where it stands, from 0 and as line:column.
func TestAnalyzeNotUTF8(t *testing.T) {
	a, err := Analyze("echo \xffab; rm -rf /\xfe 'c\x80'", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := a.Commands[0]; c.Args[0] != "\xffab" || c.Source != "echo \xffab" || c.Pos != (Pos{1, 1}) {
		t.Errorf("first command: %q %q at %v", c.Args, c.Source, c.Pos)
	}
	if c := a.Commands[1]; c.Name != "rm" || len(c.Args) != 3 || c.Args[1] != "/\xfe" || c.Args[2] != "c\x80" || c.Pos != (Pos{1, 11}) {
		t.Errorf("second command: %q %q at %v", c.Args, c.Source, c.Pos)
	}
	tests := []struct {
		src  string
		want NotUTF8
	}{
		{"echo \xff \uf7ff", NotUTF8{Byte: 0xff, Offset: 5, Line: 1, Col: 6}},
		{"echo \uf780\necho a\x80b", NotUTF8{Byte: 0x80, Offset: 15, Line: 2, Col: 7}},
	}
	for _, tt := range tests {
		_, err := Analyze(tt.src, Options{})
		var bad *NotUTF8
		if !errors.As(err, &bad) || *bad != tt.want {
			t.Errorf("%q: %v, want %+v", tt.src, err, tt.want)
		}
	}
}
