package policy_test

import "testing"

// TestScriptsFromStdinAndJustWritten pins root cause 2 of issue 10: a literal
// script fed to a shell on standard input is analysed as the script it is;
// anything else that runs code written in the same line asks.
func TestScriptsFromStdinAndJustWritten(t *testing.T) {
	checkDefaults(t, nil, []decisionCase{
		// A literal script on standard input is analysed.
		{"bash /dev/stdin <<< 'rm -rf /'", deny, "catastrophic"},
		{"sh /dev/fd/0 <<< 'rm -rf /'", deny, "catastrophic"},
		{"bash /proc/self/fd/0 <<< 'rm -f $OUTSIDE/victim'", deny, "confinement"},
		{"bash -s <<< 'rm -f $OUTSIDE/victim'", deny, "confinement"},
		{"sh -s -- arg <<< 'rm -f $OUTSIDE/victim'", deny, "confinement"},
		{"bash - <<< 'rm -f $OUTSIDE/victim'", deny, "confinement"},
		{"bash /dev/stdin <<EOF\nrm -f $OUTSIDE/victim\nEOF", deny, "confinement"},
		{"bash <<'EOF'\nrm -f $OUTSIDE/victim\nEOF", deny, "confinement"},
		{". /dev/fd/0 <<< 'rm -f $OUTSIDE/victim'", deny, "confinement"},
		{"bash /dev/stdin <<< 'echo hi'", allow, ""},
		{"sh -s <<< 'ls'", allow, ""},
		// Other programs reading their program from standard input ask.
		{"make -f /dev/stdin <<< 'all: ; date'", ask, "stored-code"},
		{"make -f - <<< 'all: ; date'", ask, "stored-code"},
		{"make --file=/dev/fd/0 <<< 'all: ; date'", ask, "stored-code"},
		{"sed -f /dev/stdin README.md <<< '1e date'", ask, "stored-code"},
		{"awk -f /dev/stdin README.md <<< 'BEGIN{system(\"date\")}'", ask, "stored-code"},
		// Files written in the line, then run.
		{"printf 'date\\n' > x.sh; sh < x.sh", ask, "stored-code"},
		{"printf 'date\\n' > x.sh; bash 0< x.sh", ask, "stored-code"},
		{"cp /dev/stdin z.sh <<< date; sh z.sh", ask, "stored-code"},
		{"cat > z.sh <<< date && bash z.sh", ask, "stored-code"},
		{"tee z.py <<< 'import os' >/dev/null; python3 z.py", ask, "stored-code"},
		{"dd of=z.sh <<< date && ./z.sh", ask, "stored-code"},
		{"mv a.txt z.sh && sh z.sh", ask, "stored-code"},
		{"printf '1e date\\n' > s.sed && sed -f s.sed README.md", ask, "stored-code"},
		{"printf '1e date\\n' > s.sed && sed --file=s.sed README.md", ask, "stored-code"},
		{"echo 'BEGIN{system(\"date\")}' > p.awk; awk -f p.awk", ask, "stored-code"},
		{"printf 'all:\\n\\tdate\\n' > Makefile && make", ask, "stored-code"},
		{"printf 'all:\\n\\tdate\\n' > sub/Makefile && make -C sub", ask, "stored-code"},
		{"printf 'x:\\n\\tdate\\n' > rules.mk && make -f rules.mk x", ask, "stored-code"},
		{"printf '{\"scripts\":{\"x\":\"date\"}}' > package.json && npm run -s x", ask, "stored-code"},
		{"echo '{}' > package.json; yarn test", ask, "stored-code"},
		{"printf 'package fx\\n//go:generate date\\n' > gen.go && go generate ./...", ask, "stored-code"},
		// A module, test file or Go source written in the line, then run by
		// python -m, a test runner or go test/run (session 30 review).
		{"printf 'import os' > a.py; python3 -m a", ask, "stored-code"},
		{"mkdir -p p && echo x > p/__main__.py && python3 -m p", ask, "stored-code"},
		{"echo 'import os' > conftest.py; pytest -q", ask, "stored-code"},
		{"echo x > tests/test_x.py && python3 -m pytest -q", ask, "stored-code"},
		{"printf 'package fx\\n' > p_test.go && go test ./...", ask, "stored-code"},
		{"printf 'package fx\\nfunc init(){}\\n' > init.go; go test ./...", ask, "stored-code"},
		{"echo 'package main' > m.go && go run m.go", ask, "stored-code"},
		// Running the project's own files, or what it builds, is fine.
		{"echo x > out.log; python3 -m pytest", allow, ""},
		{"go test ./... > test.log", allow, ""},
		{"echo x > notes.txt && go test ./...", allow, ""},
		{"make && ./scripts/build.sh", allow, ""},
		{"sh scripts/build.sh", allow, ""},
		{"sh < scripts/build.sh", allow, ""},
		{"go build -o bin/fx ./cmd/fx && ./bin/fx", allow, ""},
		{"chmod +x scripts/build.sh && ./scripts/build.sh", allow, ""},
		{"echo x > out.txt && make", allow, ""},
		{"go generate ./...", allow, ""},
	})
}

// TestExCommands: the ex commands vim and ex run from their command line are
// read however the option is spelled (-sc CMD bundles -s with -c), and the
// files they write or read are judged as a redirection's (session 30 review).
func TestExCommands(t *testing.T) {
	checkDefaults(t, nil, []decisionCase{
		{"ex -sc '!rm -f /etc/x' -c q README.md", deny, "confinement"},
		{"ex -esc '!rm -f /etc/x' README.md", deny, "confinement"},
		{"ex -s -c 'w /etc/x' -c q README.md", deny, "confinement"},
		{"ex -s '+1,$w >> ~/.bashrc' +q README.md", deny, "confinement"},
		{"ex -s -c 'saveas /etc/x' -c q README.md", deny, "confinement"},
		{"ex -s -c 'w $HOME/x' -c q README.md", ask, "dynamic"},
		{"ex -s -c '%s/a/b/g' -c wq README.md", allow, ""},
		{"ex -s -c 'w out.txt' -c q README.md", allow, ""},
		{"ex -sc x README.md", allow, ""},
		{"ex -s -c 'r notes.txt' -c wq README.md", allow, ""},
	})
}

// TestCmakeTools: cmake -E TOOL is the shell's program of the same act
// (remove_directory is rm -rf, chdir DIR CMD is env -C DIR CMD), judged as
// that program; cmake itself is an everyday build tool (session 30 review).
func TestCmakeTools(t *testing.T) {
	checkDefaults(t, nil, []decisionCase{
		{"cmake -E remove_directory /etc/x", deny, "confinement"},
		{"cmake -E rm -rf ~", deny, "catastrophic"},
		{"cmake -E env rm -rf ~", deny, "catastrophic"},
		{"cmake -E copy README.md /etc/x", deny, "confinement"},
		{"cmake -E touch /etc/x", deny, "confinement"},
		{"cmake -E chdir /etc touch x", deny, "confinement"},
		{"cmake -E create_symlink /etc esc", deny, "confinement"},
		{"cmake -E make_directory build", allow, ""},
		{"cmake -E remove_directory build", allow, ""},
		{"cmake -S . -B build", allow, ""},
		{"cmake --build build -j4", allow, ""},
		{"ctest --test-dir build", allow, ""},
	})
}

// TestXargsProgramFromInput: where xargs's input supplies the command line
// (xargs sh -c < f), the script (xargs sh < f) or the program itself (xargs
// env < f), what runs is only known at run time (session 30 review).
func TestXargsProgramFromInput(t *testing.T) {
	checkDefaults(t, nil, []decisionCase{
		{"xargs -a a.txt bash -c", ask, "stored-code"},
		{"xargs -0 sh -c < a.txt", ask, "stored-code"},
		{"xargs -n1 sh < a.txt", ask, "stored-code"},
		{"xargs env < a.txt", ask, "stored-code"},
		{"xargs -0 env X=1 < a.txt", ask, "stored-code"},
		{"xargs nice -n 5 < a.txt", ask, "stored-code"},
		{"xargs -a a.txt echo", allow, ""},
		{"git ls-files | xargs grep -n TODO", allow, ""},
		{"echo a b | xargs -n1 echo", allow, ""},
		{"xargs -I{} sh -c 'echo {}' < a.txt", ask, ""},
	})
}
