package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/hook"
)

// runCLI runs `shellgate run ARGS` in a fresh project root with no user config.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	var out, errb bytes.Buffer
	code = dispatch(append([]string{"run", "--root", root}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunExitStatus(t *testing.T) {
	lane.Live(t)
	tests := []struct {
		args       []string
		code       int
		stdout     string
		stderrHave string
	}{
		{[]string{"--", "echo hi"}, 0, "hi\n", "Command succeeded: echo hi"},
		{[]string{"--", "echo", "two", "words"}, 0, "two words\n", "Command succeeded"},
		// Several arguments are words, quoted as exec would take them.
		{[]string{"--", "printf", "%s|", "my file.txt", "$HOME", "a'b"}, 0, "my file.txt|$HOME|a'b|", "Command succeeded"},
		{[]string{"--", "exit 7"}, 7, "", "(Exit code 7."},
		{[]string{"--", "kill -9 $$"}, 128 + 9, "", "Killed by SIGKILL"},
		// A one-shot run stops what it leaves in the background: not advised.
		{[]string{"--timeout", "300ms", "--", "sleep 5"}, exitTimeout, "", "TIMEOUT: No output before the timeout (300ms): the command and everything it started were killed. Give it a longer timeout.\n"},
		{[]string{"--", "sudo id"}, exitShellgate, "", "rule privilege"},
		{[]string{"--dir", "..", "--", "pwd"}, exitShellgate, "", "ACCESS_DENIED"},
		{[]string{"--timeout", "11m", "--", "true"}, exitUsage, "", "--timeout 11m is longer than the maximum, 10m (max_timeout"},
		{[]string{"--timeout", "0s", "--", "true"}, exitUsage, "", "0s is too short: a timeout is at least 1ms"},
		{[]string{"--timeout", "1ns", "--", "true"}, exitUsage, "", "too short"},
		{[]string{"--timeout", "30", "--", "true"}, exitUsage, "", `"30" has no unit: write 30s for seconds`},
		{[]string{"--timeout", "soon", "--", "true"}, exitUsage, "", `"soon" is not a duration`},
		{[]string{"--mode", "sometimes", "--", "true"}, exitUsage, "", `--mode "sometimes": want auto, untrusted or never`},
		{[]string{"--", "sleep 30 & echo started"}, 0, "started\n", "[Background processes stopped at exit: "},
		{[]string{"--bogus", "--", "true"}, exitUsage, "", "unknown flag --bogus"},
		{nil, exitUsage, "", "no command given"},
		{[]string{"--", ""}, exitUsage, "", "the command is empty"},
		{[]string{"--", " \t\n"}, exitUsage, "", "the command is empty"},
		{[]string{"--", "echo a\x00b"}, exitUsage, "", "contains a NUL byte at offset 6"},
		// Output is streamed, not repeated in the summary, even lines that look like notes.
		{[]string{"--", "echo '[INFO] built'; echo '[WARN] slow' >&2"}, 0, "[INFO] built\n", "[WARN] slow\nshellgate: Command succeeded"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.code || stdout != tt.stdout || !strings.Contains(stderr, tt.stderrHave) || outputLines(stderr) > 1 {
				t.Errorf("exit %d stdout %q stderr:\n%s\nwant exit %d stdout %q stderr with %q", code, stdout, stderr, tt.code, tt.stdout, tt.stderrHave)
			}
			// A usage error is one line saying where the usage is.
			if code == exitUsage && (strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "; see `shellgate run -h`\n")) {
				t.Errorf("usage error:\n%s", stderr)
			}
		})
	}
}

// Without --json the output is streamed as printed, colour and NULs
// included, so the summary says nothing was removed from it.
func TestRunShowsOutputAsPrinted(t *testing.T) {
	lane.Live(t)
	code, stdout, stderr := runCLI(t, "--", `printf '\033[31mred\033[0m a\0b\n'`)
	if code != 0 || stdout != "\x1b[31mred\x1b[0m a\x00b\n" || strings.Contains(stderr, "removed") || strings.Contains(stderr, "Full output") {
		t.Errorf("exit %d stdout %q stderr:\n%s", code, stdout, stderr)
	}
}

// `run -- rm "my file.txt"` removes the one file.
func TestRunQuotesSeveralArguments(t *testing.T) {
	root := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	for _, f := range []string{"my file.txt", "my", "file.txt"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb bytes.Buffer
	if code := dispatch([]string{"run", "--root", root, "--", "rm", "my file.txt"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for f, want := range map[string]bool{"my file.txt": false, "my": true, "file.txt": true} {
		if _, err := os.Stat(filepath.Join(root, f)); (err == nil) != want {
			t.Errorf("%q exists: %v, want %v", f, err == nil, want)
		}
	}
}

func TestDispatchUsage(t *testing.T) {
	tests := []struct {
		args         []string
		code         int
		stdout, errs string
	}{
		{nil, exitUsage, "", "Usage:"},
		{[]string{"bogus"}, exitUsage, "", "shellgate: unknown command \"bogus\"; see `shellgate -h`\n"},
		{[]string{"help", "bogus"}, exitUsage, "", "shellgate help: no command \"bogus\"; see `shellgate -h`\n"},
		{[]string{"help"}, 0, "Usage:", ""},
		{[]string{"help", "run"}, 0, "Usage: shellgate run", ""},
		{[]string{"run", "-h"}, 0, "Usage: shellgate run", ""},
		{[]string{"--version"}, 0, "shellgate ", ""},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := dispatch(tt.args, &out, &errb)
		if code != tt.code || !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errb.String(), tt.errs) ||
			tt.errs != "" && strings.HasSuffix(tt.errs, "\n") && errb.String() != tt.errs {
			t.Errorf("%q: exit %d, stdout %.80q, stderr %q", tt.args, code, out.String(), errb.String())
		}
	}
}

// outputLines counts stderr lines that are the test command's output ("[WARN] …");
// the summary must not repeat them.
func outputLines(stderr string) int {
	n := 0
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "[INFO] ") || strings.HasPrefix(l, "[WARN] ") {
			n++
		}
	}
	return n
}

// With --json the envelope is the only thing on stdout, even for errors.
func TestRunJSON(t *testing.T) {
	lane.Live(t)
	for _, args := range [][]string{
		{"--json", "--", "echo hi; echo err >&2"},
		{"--json", "--", "sudo -n true"}, // refused; harmless even if it ran
		{"--json"},
		{"--json", "--dir", "missing", "--", "true"},
		{"--json", "--timeout", "soon", "--", "true"}, // usage errors too
		{"--bogus", "--json", "--", "true"},
		{"--json", "--", ""},
		{"--json", "--", "echo a\x00b"},
	} {
		code, stdout, stderr := runCLI(t, args...)
		var env envelope.Envelope
		dec := json.NewDecoder(strings.NewReader(stdout))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&env); err != nil || dec.More() {
			t.Fatalf("%v: stdout is not one envelope (%v):\n%s", args, err, stdout)
		}
		if env.Status == envelope.Success != (code == 0) {
			t.Errorf("%v: status %s but exit %d", args, env.Status, code)
		}
		if env.Status == envelope.Success && (env.Data.Stdout != "hi\n" || env.Data.Stderr != "err\n" || stderr != "") {
			t.Errorf("%v: %+v, stderr %q", args, env.Data, stderr)
		}
		if env.Status == envelope.Error && env.Error.Message == "" {
			t.Errorf("%v: error without a message", args)
		}
		if strings.HasPrefix(env.Data.Command, "-") {
			t.Errorf("%v: data.command %q is not the command", args, env.Data.Command)
		}
		// The user's own bad arguments are bad usage, in the envelope as in the status.
		if env.Error != nil && env.Error.Code == envelope.InvalidParam && code != exitUsage {
			t.Errorf("%v: INVALID_PARAM but exit %d, want %d", args, code, exitUsage)
		}
	}
}

func TestRunConfigErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("[policy]\nnetwrok = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "--config", bad, "--", "true")
	if code != exitShellgate || !strings.Contains(stderr, `netwrok`) || !strings.Contains(stderr, "bad.toml:2") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// --allow-domain with nothing in it is bad usage that says so, on every command
// that takes it (the hook's with its blocking status): not an allow-list that
// silently lacks the domain the user meant.
func TestAllowDomainEmpty(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"run", "--allow-domain", "", "--", "true"}, exitUsage},
		{[]string{"run", "--allow-domain", "registry.npmjs.org", "--allow-domain", " ", "--", "true"}, exitUsage},
		{[]string{"check", "--allow-domain=", "--", "true"}, exitUsage},
		{[]string{"exec", "--allow-domain", "", "true"}, exitUsage},
		{[]string{"hook", "claude-code", "--allow-domain", ""}, hook.ExitBlock},
	} {
		var out, errb bytes.Buffer
		code := dispatch(tc.args, &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), "-allow-domain \"") || !strings.Contains(errb.String(), "\": no domain given; want a host name") {
			t.Errorf("%q: exit %d, stderr %q; want %d and the flag named", tc.args, code, errb.String(), tc.code)
		}
	}
}

// Output streamed to the user in full leaves no spill file and no note that it was cut.
func TestRunStreamedOutputIsNotSpilled(t *testing.T) {
	lane.Live(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the default spill dir is
	code, stdout, stderr := runCLI(t, "--", "seq 1 100000")
	if code != 0 || len(stdout) != 588895 {
		t.Fatalf("exit %d, %d bytes streamed", code, len(stdout))
	}
	if strings.Contains(stderr, "Truncated") || strings.Contains(stderr, "Full output") || !strings.Contains(stderr, "Command succeeded") {
		t.Errorf("summary:\n%s", stderr)
	}
	spills, _ := filepath.Glob(filepath.Join(tmp, "shellgate-spill-*", "*"))
	if len(spills) > 0 {
		t.Errorf("spill files left: %v", spills)
	}
	// With --json the envelope is all there is: the full output is saved.
	_, stdout, _ = runCLI(t, "--json", "--", "seq 1 100000")
	if !strings.Contains(stdout, `"full_output_path":"`) {
		t.Errorf("--json: no full_output_path")
	}
}

// A one-shot run whose output was not cut leaves nothing in the spill
// directory; one whose output was cut leaves the file data.full_output_path
// names, with all of it, for the user to read.
func TestRunJSONLeavesOnlyNamedSpills(t *testing.T) {
	lane.Live(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the default spill dir is
	left := func() []string {
		var files []string
		filepath.WalkDir(tmp, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, path)
			}
			return nil
		})
		return files
	}
	decode := func(stdout string) envelope.Envelope {
		var env envelope.Envelope
		if err := json.Unmarshal([]byte(stdout), &env); err != nil {
			t.Fatalf("not an envelope (%v): %s", err, stdout)
		}
		return env
	}
	env := decode(func() string { _, out, _ := runCLI(t, "--json", "--", "echo hi; seq 1 1000 >&2"); return out }())
	if env.Data.FullOutputPath != nil || env.Data.Truncated {
		t.Fatalf("a small output spilled: %s", env.Text)
	}
	if files := left(); len(files) > 0 {
		t.Errorf("a run that cut nothing left files: %v", files)
	}
	env = decode(func() string { _, out, _ := runCLI(t, "--json", "--", "seq 1 20000"); return out }())
	if env.Data.FullOutputPath == nil || !env.Data.Truncated || !strings.Contains(env.Text, *env.Data.FullOutputPath) {
		t.Fatalf("a cut output names no file: %s", env.Text)
	}
	if files := left(); len(files) != 1 || files[0] != *env.Data.FullOutputPath {
		t.Errorf("files left %v, want only %s", files, *env.Data.FullOutputPath)
	}
	got, _ := os.ReadFile(*env.Data.FullOutputPath)
	if len(got) != 108894 || !strings.HasSuffix(string(got), "\n19999\n20000\n") {
		t.Errorf("the named file holds %d bytes, want all 108894", len(got))
	}
}
