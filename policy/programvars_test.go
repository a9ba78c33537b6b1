package policy_test

import "testing"

// An option or a make variable that names a program the tool then runs asks
// as the environment variable that does the same does (npm_config_script_shell,
// RUSTC_WRAPPER): each was run with a program of the lab's (npm 11, gcc 12,
// GNU make 4.3) and ran it.
func TestProgramChoosingOptions(t *testing.T) {
	checkDefaults(t, nil, []decisionCase{
		{"npm --script-shell=./x run test", ask, "code-execution"},
		{"npm run test --script-shell ./x", ask, "code-execution"},
		{"npm test --node-options='--require ./x.js'", ask, "code-execution"},
		{"npx --userconfig ./x.npmrc eslint .", ask, "code-execution"},
		{"gcc -wrapper ./x a.c", ask, "code-execution"},
		{"cc -B ./bin a.c", ask, "code-execution"},
		{"gcc --prefix=bin/ a.c", ask, "code-execution"},
		{"gcc -specs=x.specs a.c", ask, "code-execution"},
		{"gcc -fplugin=./p.so a.c", ask, "code-execution"},
		{"COMPILER_PATH=./bin gcc a.c", ask, "code-execution"},
		{"GCC_EXEC_PREFIX=./bin/ gcc a.c", ask, "code-execution"},
		{"make CC=./x", ask, "code-execution"},
		{"make CXX:=/var/tmp/x all", ask, "code-execution"},
		{"make LD_PRELOAD=./x.so test", ask, "code-execution"},
		{"CC=./x make", ask, "code-execution"},
		{"CC='gcc -B./bin' make", ask, "code-execution"},
		{"npm --prefix sub run build", allow, ""},
		{"npm test --loglevel=error", allow, ""},
		{"npm run test -- --script-shell=x", allow, ""},
		{"gcc -O2 -Wall -o a a.c", allow, ""},
		{"make CC=clang V=1", allow, ""},
		{"CC='ccache gcc' make", allow, ""},
		{"make CC=/usr/bin/gcc-12 PREFIX=/usr/local", allow, ""},
	})
}
