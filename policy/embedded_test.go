package policy_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCommandsInsideOtherTools pins root cause 4 of issue 10: commands and
// writes hidden in the languages of other tools, in several spellings.
func TestCommandsInsideOtherTools(t *testing.T) {
	checkDefaults(t, nil, []decisionCase{
		// sed: e, w and W in any spelling of the script option.
		{"sed -n 's/x/y/w $OUTSIDE/PWNED' README.md", deny, "confinement"},
		{"sed --expression='1W $OUTSIDE/PWNED' README.md", deny, "confinement"},
		{"sed -ne '1w $OUTSIDE/PWNED' README.md", deny, "confinement"},
		{"sed --quiet --expr '1e date' README.md", ask, "code-execution"},
		{"sed -n '1w out.txt' README.md", allow, ""},
		// sqlite3 dot-commands.
		{"sqlite3 :memory: '.shell rm -rf /'", deny, "catastrophic"},
		{"sqlite3 :memory: '.system rm -f $OUTSIDE/victim'", deny, "confinement"},
		{"sqlite3 -cmd '.shell rm -rf /' x.db .quit", deny, "catastrophic"},
		{"sqlite3 :memory: '.output $OUTSIDE/PWNED' 'select 1'", deny, "confinement"},
		{"sqlite3 :memory: '.once |rm -rf /' 'select 1'", deny, "catastrophic"},
		{"sqlite3 x.db <<< '.shell rm -rf /'", deny, "catastrophic"},
		{"sqlite3 x.db \"select writefile('x', 'y')\"", ask, ""},
		{"sqlite3 x.db '.load ./evil'", ask, ""},
		{"sqlite3 x.db 'select count(*) from t'", allow, ""},
		{"sqlite3 x.db '.output out.txt' 'select 1'", allow, ""},
		// ex and vi commands.
		{"ex -s -c '!rm -rf /' -c 'q!' README.md", deny, "catastrophic"},
		{"ex -s +'!rm -f $OUTSIDE/victim' +q README.md", deny, "confinement"},
		{"ex -s -c ':silent !rm -rf /' -c q README.md", deny, "catastrophic"},
		{"ex -s README.md <<< '!rm -rf /'", deny, "catastrophic"},
		{"ex -s -c 'r !date' -c 'wq' README.md", ask, ""},
		{"ex -s -c '%s/a/b/g' -c 'wq' README.md", allow, ""},
		// awk writes and pipes.
		{"awk 'BEGIN{print \"x\" > \"$OUTSIDE/PWNED\"}'", deny, "confinement"},
		{"awk '{ printf \"%s\", $0 >> \"$OUTSIDE/log\" }' a.txt", deny, "confinement"},
		{"awk '{ print > $1 }' a.txt", ask, "dynamic"},
		{"gawk -e 'BEGIN{system(\"date\")}'", ask, "code-execution"},
		{"awk 'BEGIN{print \"x\" | \"sh\"}'", ask, "code-execution"},
		{"awk '$1 > 5 { print $2 }' data.csv", allow, ""},
		{"awk '{ print ($1 > 5) }' data.csv", allow, ""},
		{"awk '{ print > \"out.txt\" }' a.txt", allow, ""},
		// Other tools that run commands.
		{"split --filter='rm -rf /' a.txt", deny, "catastrophic"},
		{"git -c trailer.x.cmd='rm -rf /' interpret-trailers", deny, "catastrophic"},
		{"git config trailer.x.cmd 'date'", ask, "code-execution"},
		{"find . -fprint $OUTSIDE/PWNED", deny, "confinement"},
		{"tar --to-command='rm -rf /' -xf a.tar", deny, "catastrophic"},
		{"rsync -e 'rm -rf /' a b", deny, "catastrophic"},
		{"man -Hdate ls", ask, "code-execution"},
		{"timeout 5 sh -c 'rm -rf /'", deny, "catastrophic"},
		{"xargs -I{} sh -c 'rm -rf /' < names.txt", deny, "catastrophic"},
		{"flock -c 'rm -rf /' lock", deny, "catastrophic"},
	})
}

// TestProgramFiles: sed -f and awk -f programs already in the project are
// read and judged like programs on the command line.
func TestProgramFiles(t *testing.T) {
	l := newLab(t)
	for name, body := range map[string]string{
		"exec.sed": "1e date\n", "write.sed": "1w " + l.outside + "/PWNED\n", "plain.sed": "s/a/b/\n",
		"sys.awk": "BEGIN { system(\"date\") }\n", "plain.awk": "{ print $1 }\n", "out.awk": "{ print > \"x\" }\n",
	} {
		if err := os.WriteFile(filepath.Join(l.root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	checkDefaults(t, l, []decisionCase{
		{"sed -f exec.sed README.md", ask, "code-execution"},
		{"sed --file=exec.sed README.md", ask, "code-execution"},
		{"sed -nf write.sed README.md", deny, "confinement"},
		{"sed -f plain.sed README.md", allow, ""},
		{"sed -f missing.sed README.md", ask, "stored-code"},
		{"sed -f $OUTSIDE/victim README.md", allow, ""},
		{"awk -f sys.awk a.txt", ask, "code-execution"},
		{"awk -f out.awk a.txt", ask, "dynamic"},
		{"awk -f plain.awk a.txt", allow, ""},
	})
}
