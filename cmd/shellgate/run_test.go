package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/envelope"
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
	tests := []struct {
		args       []string
		code       int
		stdout     string
		stderrHave string
	}{
		{[]string{"--", "echo hi"}, 0, "hi\n", "Command succeeded: echo hi"},
		{[]string{"--", "echo", "two", "words"}, 0, "two words\n", "Command succeeded"},
		{[]string{"--", "exit 7"}, 7, "", "(Exit code 7."},
		{[]string{"--", "kill -9 $$"}, 128 + 9, "", "Killed by SIGKILL"},
		{[]string{"--timeout", "300ms", "--", "sleep 5"}, exitTimeout, "", "TIMEOUT"},
		{[]string{"--", "sudo id"}, exitShellgate, "", "rule privilege"},
		{[]string{"--dir", "..", "--", "pwd"}, exitShellgate, "", "ACCESS_DENIED"},
		{[]string{"--timeout", "11m", "--", "true"}, exitShellgate, "", "--timeout 11m0s is longer than the maximum, 10m0s"},
		{[]string{"--timeout", "0s", "--", "true"}, exitShellgate, "", "0s is too short: a timeout is at least 1ms"},
		{[]string{"--timeout", "1ns", "--", "true"}, exitShellgate, "", "too short"},
		{[]string{"--timeout", "30", "--", "true"}, exitShellgate, "", `"30" has no unit: write 30s for seconds`},
		{[]string{"--timeout", "soon", "--", "true"}, exitShellgate, "", `"soon" is not a duration`},
		{[]string{"--mode", "sometimes", "--", "true"}, exitShellgate, "", `--mode "sometimes": want auto, untrusted or never`},
		{[]string{"--", "sleep 30 & echo started"}, 0, "started\n", "stopping 1 background process(es)"},
		{[]string{"--bogus", "--", "true"}, exitShellgate, "", "flag provided but not defined: -bogus"},
		{nil, exitShellgate, "", "no command given"},
		// Output is streamed, not repeated in the summary, even lines that look like notes.
		{[]string{"--", "echo '[INFO] built'; echo '[WARN] slow' >&2"}, 0, "[INFO] built\n", "[WARN] slow\nshellgate: Command succeeded"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.args...)
			if code != tt.code || stdout != tt.stdout || !strings.Contains(stderr, tt.stderrHave) || outputLines(stderr) > 1 {
				t.Errorf("exit %d stdout %q stderr:\n%s\nwant exit %d stdout %q stderr with %q", code, stdout, stderr, tt.code, tt.stdout, tt.stderrHave)
			}
		})
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
	for _, args := range [][]string{
		{"--json", "--", "echo hi; echo err >&2"},
		{"--json", "--", "sudo -n true"}, // refused; harmless even if it ran
		{"--json"},
		{"--json", "--dir", "missing", "--", "true"},
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
