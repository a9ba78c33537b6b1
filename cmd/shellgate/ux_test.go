package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/lane"
)

// A one-shot run stops what its command left in the background, and its text
// says so rather than "still running", with --json or without.
func TestRunBackgroundStoppedText(t *testing.T) {
	lane.Live(t)
	_, _, stderr := runCLI(t, "--", "sleep 30 & echo started")
	if !strings.Contains(stderr, "\n[Background processes stopped at exit: ") || strings.Contains(stderr, "still running") ||
		!strings.HasSuffix(stderr, "\nshellgate: run leaves nothing behind; shellgate mcp keeps jobs that outlive one command.\n") {
		t.Errorf("stderr:\n%s", stderr)
	}
	_, stdout, _ := runCLI(t, "--json", "--", "sleep 30 & echo started")
	var env envelope.Envelope
	if err := json.Unmarshal([]byte(stdout), &env); err != nil || len(env.Data.BackgroundPIDs) != 1 ||
		!strings.Contains(env.Text, "\n[Background processes stopped at exit: ") || strings.Contains(env.Text, "still running") {
		t.Errorf("--json: %v\n%s", err, stdout)
	}
}

// Each subcommand's help lists the flags that matter to it: changes and undo
// start no sandbox and judge no command, doctor judges none.
func TestSubcommandFlags(t *testing.T) {
	files := []string{"-root", "-config", "-trust-project", "-no-user-config", "-checkpoints"}
	sandbox := []string{"-allow-network", "-sandbox", "-profile", "-allow-domain", "-host-port"}
	for _, tc := range []struct {
		cmd       string
		have, not []string
	}{
		{"changes", files, append([]string{"-mode"}, sandbox...)},
		{"undo", files, append([]string{"-mode"}, sandbox...)},
		{"doctor", append(files, sandbox...), []string{"-mode"}},
		{"run", append(append(files, sandbox...), "-mode"), nil},
		{"check", append(append(files, sandbox...), "-mode"), nil},
	} {
		var out, errb bytes.Buffer
		if code := dispatch([]string{tc.cmd, "-h"}, &out, &errb); code != 0 {
			t.Fatalf("%s -h: exit %d %s", tc.cmd, code, errb.String())
		}
		flags := map[string]bool{}
		for _, l := range strings.Split(out.String(), "\n") {
			if f, ok := strings.CutPrefix(l, "  -"); ok {
				flags["-"+strings.Fields(f)[0]] = true
			}
		}
		for _, f := range tc.have {
			if !flags[f] {
				t.Errorf("shellgate %s -h lacks %s", tc.cmd, f)
			}
		}
		for _, f := range tc.not {
			if flags[f] {
				t.Errorf("shellgate %s -h lists %s, which does nothing for it", tc.cmd, f)
			}
		}
		// A flag not listed is not taken either.
		if len(tc.not) > 0 {
			var out, errb bytes.Buffer
			if code := dispatch([]string{tc.cmd, tc.not[0] + "=auto"}, &out, &errb); code != exitUsage {
				t.Errorf("shellgate %s %s=auto: exit %d, want %d", tc.cmd, tc.not[0], code, exitUsage)
			}
		}
	}
}

// --version says something useful without a version or commit recorded (a
// build with -buildvcs=false, as GOFLAGS may set): that it is a development
// build, and the Go and system that built it; otherwise the version, the
// commit once.
func TestVersionLine(t *testing.T) {
	var out, errb bytes.Buffer
	if code := dispatch([]string{"--version"}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "shellgate ") ||
		!strings.Contains(out.String(), runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("--version: %d %q", code, out.String())
	}
	const rev = "0123456789abcdef0123456789abcdef01234567"
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		main     string
		settings []debug.BuildSetting
		want     string
	}{
		{"(devel)", nil, "shellgate (devel): a development build, no version or commit recorded (built with -buildvcs=false, or outside a git checkout); go1.26.8 linux/amd64"},
		{"", []debug.BuildSetting{{Key: "-tags", Value: "shellgate_nomcp"}}, "shellgate (devel): a development build, no version or commit recorded (built with -buildvcs=false, or outside a git checkout); go1.26.8 linux/amd64, -tags shellgate_nomcp"},
		{"(devel)", vcs, "shellgate (devel) 0123456789ab+dirty (go1.26.8 linux/amd64)"},
		{"v0.0.0-20261128170000-0123456789ab+dirty", vcs, "shellgate v0.0.0-20261128170000-0123456789ab+dirty (go1.26.8 linux/amd64)"},
		{"v1.2.3", nil, "shellgate v1.2.3 (go1.26.8 linux/amd64)"},
		{"v1.2.3", []debug.BuildSetting{{Key: "CGO_ENABLED", Value: "0"}}, "shellgate v1.2.3 (go1.26.8 linux/amd64)"},
		// Built with cgo: a second line says what that costs and the way out.
		{"v1.2.3", []debug.BuildSetting{{Key: "CGO_ENABLED", Value: "1"}}, "shellgate v1.2.3 (go1.26.8 linux/amd64)\n" + cgoLine},
	} {
		info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: tc.main}, Settings: tc.settings}
		if got := versionText(info, "linux/amd64"); got != tc.want {
			t.Errorf("%q %v:\n%s\nwant\n%s", tc.main, tc.settings, got, tc.want)
		}
	}
}

const cgoLine = "built with cgo (dynamically linked): each start costs ~2 ms more; build with CGO_ENABLED=0"

// A shellgate built with cgo on, as a plain `go build` builds it where a C
// compiler is found, says so where a user looks (--version, doctor), and how
// to build it as README does; the documented build says nothing of it.
func TestCgoBuildSaysSo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the cost is measured on Linux")
	}
	if _, err := exec.LookPath(cmp.Or(os.Getenv("CC"), "gcc")); err != nil {
		t.Skip("no C compiler: cgo is off here whatever is asked")
	}
	dir := visibleTempDir(t)
	for _, cgo := range []bool{false, true} {
		bin := filepath.Join(dir, fmt.Sprint("shellgate-cgo-", cgo))
		goBuild(t, cgo, bin, ".")
		root, home := t.TempDir(), t.TempDir()
		for _, args := range [][]string{{"--version"}, {"doctor", "--no-user-config", "--root", root}} {
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home)
			out, _ := cmd.Output() // doctor exits 1 where a layer is missing
			if got := strings.Contains(string(out), cgoLine); got != cgo {
				t.Errorf("cgo %v: %s %q says it was built with cgo: %v\n%s", cgo, bin, args, got, out)
			}
		}
	}
}

// Binary output is not written by run, a terminal or not (the envelope's
// rules); where stdout is a pipe or a file, where the bytes may have been
// expected, a line on stderr says how many were withheld and what passes
// them through.
func TestRunBinaryWithheldSaysSo(t *testing.T) {
	lane.Live(t)
	code, stdout, stderr := runCLI(t, "--", `printf 'a\0\1b'`)
	want := "\nshellgate: 4 bytes of binary output withheld from stdout (the full output file has them); shellgate exec passes output through as is.\n"
	if code != 0 || stdout != "" || !strings.HasSuffix(stderr, want) || !strings.Contains(stderr, "[Binary output: not shown as text.]") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if _, _, stderr := runCLI(t, "--json", "--", `printf 'a\0\1b'`); stderr != "" {
		t.Errorf("--json: stderr %q", stderr)
	}
}

// No line shellgate writes for a model or a person ends in blanks: the
// envelope's text with --json, the summary without, for the common calls and
// blank commands (which are bad usage, INVALID_PARAM with --json).
func TestRunTextLineEnds(t *testing.T) {
	lane.Live(t)
	blanks := func(what, s string) {
		t.Helper()
		for i, l := range strings.Split(s, "\n") {
			if strings.TrimRight(l, " \t") != l {
				t.Errorf("%s: line %d ends in blanks: %q\n%s", what, i+1, l, s)
			}
		}
	}
	for _, cmd := range []string{"echo hi", "echo hi   ", "   ", "", " \t\n", "exit 3", "sudo true", "sleep 30 &  ",
		`printf 'a\0b'`, "for x in a; do  \n echo $x \ndone\n"} {
		code, stdout, _ := runCLI(t, "--json", "--", cmd)
		var env envelope.Envelope
		if err := json.Unmarshal([]byte(stdout), &env); err != nil {
			t.Fatalf("%q: %v\n%s", cmd, err, stdout)
		}
		blanks(fmt.Sprintf("--json %q", cmd), env.Text)
		if strings.TrimSpace(cmd) == "" && (code != exitUsage || env.Error == nil || env.Error.Code != envelope.InvalidParam || env.Text !=
			"Command not run.\nError INVALID_PARAM: the command is empty (shellgate run [flags] -- COMMAND)") {
			t.Errorf("--json %q: exit %d\n%s", cmd, code, env.Text)
		}
		_, _, stderr := runCLI(t, "--", cmd)
		blanks(fmt.Sprintf("%q", cmd), stderr)
	}
}

// Each flag of each subcommand's help says its value once and names it as the
// others do: the flag line's placeholder is a Go type, a NAME or a choice
// (on|off), not an example that reads as the default ("-timeout 30s" for a
// timeout of 2m by default), and the text below it does not start by saying
// the flag and its placeholder again ("-checkpoints on|off" over "checkpoints
// on|off: checkpoint the project …").
func TestFlagHelpLines(t *testing.T) {
	for _, cmd := range []string{"run", "check", "mcp", "doctor", "changes", "undo", "hook", "exec", "install", "uninstall"} {
		var out, errb bytes.Buffer
		if code := dispatch([]string{cmd, "-h"}, &out, &errb); code != 0 {
			t.Fatalf("%s -h: exit %d %s", cmd, code, errb.String())
		}
		lines := strings.Split(out.String(), "\n")
		for i, l := range lines {
			f, ok := strings.CutPrefix(l, "  -")
			if !ok {
				continue
			}
			name, placeholder, _ := strings.Cut(f, " ")
			if placeholder != "" && !isPlaceholder(placeholder) {
				t.Errorf("shellgate %s -h: -%s's value is shown as %q, not a NAME, a choice or a type", cmd, name, placeholder)
			}
			if i+1 < len(lines) {
				text := strings.TrimSpace(lines[i+1])
				if strings.HasPrefix(text, name+" ") || placeholder != "" && strings.HasPrefix(text, placeholder) {
					t.Errorf("shellgate %s -h: -%s's text repeats the flag line: %q", cmd, name, text)
				}
			}
		}
	}
}

// isPlaceholder says whether s, a flag line's placeholder, is a Go type name
// (the flag package's default), an upper-case NAME or a choice of words.
func isPlaceholder(s string) bool {
	switch s {
	case "string", "int", "uint", "float", "duration", "value":
		return true
	}
	if strings.Contains(s, "|") {
		return true
	}
	return strings.ToUpper(s) == s && strings.ToLower(s) != s
}

// A configuration file that cannot be read is reported by the command that
// read it ("shellgate run: configuration: FILE:LINE: …", where run said
// "shellgate:"), and not as bad usage with a pointer to -h, which does not
// help with a file (doctor exited 64 with "see `shellgate doctor -h`").
func TestConfigErrorNamesTheCommand(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("[policy]\nmod = \"auto\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, cmd := range []string{"run", "exec", "check", "doctor", "changes", "undo", "mcp"} {
		args := []string{cmd, "--root", root, "--no-user-config", "--config", bad}
		if cmd == "run" || cmd == "exec" || cmd == "check" {
			args = append(args, "--", "true")
		}
		var out, errb bytes.Buffer
		code := dispatch(args, &out, &errb)
		want := "shellgate " + cmd + ": configuration: " + bad + `:2: unknown key "mod" in [policy]; did you mean "mode"?` + "\n"
		if code == 0 || code == exitUsage || errb.String() != want {
			t.Errorf("shellgate %s with a bad --config: exit %d, stderr\n%q\nwant\n%q", cmd, code, errb.String(), want)
		}
	}
}

// An unknown flag one or two letters off a real one names it, as an unknown
// configuration key does; one nothing like a flag gets no guess.
func TestUnknownFlagSuggests(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--timout", "5s", "--", "true"}, "shellgate run: unknown flag --timout (did you mean --timeout?); see `shellgate run -h`\n"},
		{[]string{"check", "--jsno", "--", "true"}, "shellgate check: unknown flag --jsno (did you mean --json?); see `shellgate check -h`\n"},
		{[]string{"mcp", "--htp", "127.0.0.1:0"}, "shellgate mcp: unknown flag --htp (did you mean --http?); see `shellgate mcp -h`\n"},
		{[]string{"undo", "--no-user-conifg"}, "shellgate undo: unknown flag --no-user-conifg (did you mean --no-user-config?); see `shellgate undo -h`\n"},
		{[]string{"run", "--bogus", "--", "true"}, "shellgate run: unknown flag --bogus; see `shellgate run -h`\n"},
		// As typed: one dash, and without its value.
		{[]string{"run", "-timout=5s", "--", "true"}, "shellgate run: unknown flag -timout (did you mean --timeout?); see `shellgate run -h`\n"},
		{[]string{"run", "--timeout"}, "shellgate run: --timeout needs a value; see `shellgate run -h`\n"},
		{[]string{"run", "-timeout", "5", "--", "true"}, "shellgate run: -timeout \"5\": \"5\" has no unit: write 5s for seconds or 5ms for milliseconds; see `shellgate run -h`\n"},
	} {
		var out, errb bytes.Buffer
		if code := dispatch(tc.args, &out, &errb); code != exitUsage || errb.String() != tc.want {
			t.Errorf("shellgate %s: exit %d, stderr\n%q\nwant\n%q", strings.Join(tc.args, " "), code, errb.String(), tc.want)
		}
	}
}

// An unknown command one or two letters off a real one names it, as an unknown
// flag does; a flag before the command says where flags go; "help -h" is help
// (it was "no command \"-h\"", exit 64).
func TestUnknownCommandSuggests(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string // stderr
	}{
		{[]string{"chek", "--", "ls"}, exitUsage, "shellgate: unknown command \"chek\"; did you mean check?; see `shellgate -h`\n"},
		{[]string{"undoo"}, exitUsage, "shellgate: unknown command \"undoo\"; did you mean undo?; see `shellgate -h`\n"},
		{[]string{"--versoin"}, exitUsage, "shellgate: unknown flag \"--versoin\"; did you mean --version?; see `shellgate -h`\n"},
		{[]string{"--root", ".", "run", "--", "true"}, exitUsage, "shellgate: unknown flag \"--root\" (flags come after the command: shellgate COMMAND [flags]); see `shellgate -h`\n"},
		{[]string{"help", "chek"}, exitUsage, "shellgate help: no command \"chek\"; did you mean check?; see `shellgate -h`\n"},
		{[]string{"frobnicate"}, exitUsage, "shellgate: unknown command \"frobnicate\"; see `shellgate -h`\n"},
		{[]string{"help", "-h"}, 0, ""},
	} {
		var out, errb bytes.Buffer
		if code := dispatch(tc.args, &out, &errb); code != tc.code || errb.String() != tc.want {
			t.Errorf("shellgate %s: exit %d, stderr\n%q\nwant exit %d,\n%q", strings.Join(tc.args, " "), code, errb.String(), tc.code, tc.want)
		}
		if tc.code == 0 && !strings.Contains(out.String(), "Usage:") {
			t.Errorf("shellgate %s: no usage on stdout:\n%s", strings.Join(tc.args, " "), out.String())
		}
	}
}

// --json is one line for the program or agent that reads it from a pipe: the
// indentation was a quarter of an envelope's characters (1 065 for echo hi).
func TestJSONOneLineOffTerminal(t *testing.T) {
	lane.Live(t)
	_, stdout, _ := runCLI(t, "--json", "--", "echo hi")
	var env envelope.Envelope
	if err := json.Unmarshal([]byte(stdout), &env); err != nil || env.Status != envelope.Success ||
		strings.Count(stdout, "\n") != 1 || !strings.HasSuffix(stdout, "}\n") {
		t.Errorf("run --json on a pipe: %v\n%s", err, stdout)
	}
	t.Logf("run --json -- echo hi: %d characters", len(stdout))
	var out, errb bytes.Buffer
	if code := dispatch([]string{"check", "--json", "--no-user-config", "--root", t.TempDir(), "--", "echo hi"}, &out, &errb); code != 0 || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("check --json on a pipe: exit %d\n%s%s", code, out.String(), errb.String())
	}
}

// Each subcommand's help reads as a page: its text is wrapped (no line over
// 90 columns before the flags), and "Flags:" heads the flags.
func TestHelpIsWrapped(t *testing.T) {
	for _, cmd := range []string{"run", "check", "mcp", "hook", "exec", "install", "uninstall", "doctor", "changes", "undo"} {
		var out, errb bytes.Buffer
		dispatch([]string{cmd, "-h"}, &out, &errb)
		help := out.String() + errb.String()
		text, _, ok := strings.Cut(help, "\nFlags:\n  -")
		if !ok {
			t.Errorf("shellgate %s -h: no \"Flags:\" line before the flags:\n%.600s", cmd, help)
			continue
		}
		for _, l := range strings.Split(text, "\n") {
			if n := len([]rune(l)); n > 90 {
				t.Errorf("shellgate %s -h: a line of %d columns: %s", cmd, n, l)
			}
		}
	}
}

// Every subcommand exits by one scheme (docs/cli.md, "Exit status"): 64 for
// bad usage (hook: 2, the agents' blocking status), 125 when shellgate could
// not do it (a bad configuration: check exited 78), 1 for a "no" that is no
// error (a command number the checkpoints do not hold: undo exited 1 with
// no checkpoints, 2 for an unknown N), and a --dir that is not a directory
// is bad usage in check as in run (check denied it, 2).
func TestExitStatuses(t *testing.T) {
	lab, root := undoLab(t)
	bad := filepath.Join(lab, "bad.toml")
	if err := os.WriteFile(bad, []byte("[policy]\nmod = \"auto\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "file.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type tc struct {
		args []string
		code int
	}
	var tests []tc
	for _, cmd := range []string{"run", "check", "exec", "mcp", "doctor", "changes", "undo", "install", "uninstall", "hook"} {
		code := exitUsage
		if cmd == "hook" {
			code = 2
		}
		tests = append(tests, tc{[]string{cmd, "--bogus"}, code})
	}
	for _, cmd := range []string{"run", "check", "exec", "mcp", "doctor", "changes", "undo"} {
		args := []string{cmd, "--root", root, "--no-user-config", "--config", bad}
		if cmd == "run" || cmd == "exec" || cmd == "check" {
			args = append(args, "--", "true")
		}
		tests = append(tests, tc{args, exitShellgate})
	}
	tests = append(tests,
		tc{[]string{"changes", "--root", root, "99"}, exitNo},
		tc{[]string{"undo", "--root", root, "99"}, exitNo},
		tc{[]string{"undo", "--root", root}, exitNo},
		tc{[]string{"check", "--root", root, "--dir", "file.txt", "--", "ls"}, exitUsage},
		tc{[]string{"run", "--root", root, "--dir", "file.txt", "--", "ls"}, exitUsage},
		tc{[]string{"check", "--root", root, "--json", "--dir", "file.txt", "--", "ls"}, exitUsage},
	)
	for _, tc := range tests {
		var out, errb bytes.Buffer
		if code := dispatch(tc.args, &out, &errb); code != tc.code {
			t.Errorf("shellgate %s: exit %d, want %d\n%s", strings.Join(tc.args, " "), code, tc.code, errb.String())
		}
	}
}

// run and exec in a root that holds the checkpoint store (the home
// directory) say so in one line, up front, and exit 125; run --json in the
// envelope too. Each write failed with a 520-character CHECKPOINT_FAILED.
func TestRunRootHoldsCheckpoints(t *testing.T) {
	lane.Live(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv(shellgate.CheckpointsEnv, "")
	line := "the project root is your home directory (" + home + "), which holds shellgate's checkpoints (in ~/.local/state/shellgate/checkpoints): start shellgate in the project's directory (or --root DIR), or turn checkpoints off (--checkpoints off)"
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"run", "--root", home, "--", "touch x"}, "shellgate run: " + line + "\n"},
		{[]string{"run", "--root", home, "--json", "--", "ls"}, ""},
		{[]string{"exec", "--root", home, "touch x"}, "shellgate exec: " + line + "\n"},
	} {
		var out, errb bytes.Buffer
		code := dispatch(tc.args, &out, &errb)
		if code != exitShellgate || errb.String() != tc.stderr {
			t.Errorf("shellgate %s: exit %d, stderr\n%q\nwant\n%q", strings.Join(tc.args, " "), code, errb.String(), tc.stderr)
		}
		if tc.stderr == "" {
			var env envelope.Envelope
			if err := json.Unmarshal(out.Bytes(), &env); err != nil || env.Error == nil || env.Error.Code != envelope.CheckpointFailed || env.Error.Message != line {
				t.Errorf("--json: %v\n%s", err, out.String())
			}
		}
	}
	if _, err := os.Stat(filepath.Join(home, "x")); err == nil {
		t.Errorf("touch x ran")
	}
	// doctor says it on a line of its own, and still probes the sandbox
	// (it said "sandbox: not run: Command not run: true …").
	var out bytes.Buffer
	if code := dispatch([]string{"doctor", "--root", home, "--sandbox", "off"}, &out, io.Discard); code != exitNo ||
		!strings.Contains(out.String(), "\nroot:     every command is refused: "+line+"\nsandbox:  off") {
		t.Errorf("doctor: exit %d\n%s", code, out.String())
	}
	if code := dispatch([]string{"run", "--root", home, "--checkpoints", "off", "--", "true"}, io.Discard, io.Discard); code != 0 {
		t.Errorf("with --checkpoints off: exit %d", code)
	}
}
