package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/envelope"
)

// layerRun is one `shellgate run --json` of a layer test: the envelope, and
// the exit status.
type layerRun struct {
	code int
	env  envelope.Envelope
}

// missing is context.sandbox.missing, one entry a layer.
func (r layerRun) missing() []string {
	m, _ := r.env.Context.Sandbox.(map[string]any)
	list, _ := m["missing"].([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

// runWrapped runs `shellgate run --json --sandbox MODE -- COMMAND` in root,
// started through wrap (a program that takes a layer away, then runs the rest
// of its arguments), with no user configuration; env is added.
func runWrapped(t *testing.T, bin string, wrap []string, root, mode, command string, env ...string) layerRun {
	t.Helper()
	argv := append(append([]string{}, wrap...), bin, "run", "--json", "--root", root, "--no-user-config",
		"--audit-log", "off", "--checkpoints", "off", "--sandbox", mode, "--", command)
	cmd := exec.Command(argv[0], argv[1:]...)
	home := visibleTempDir(t)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "BASH_ALLOW_NETWORK=")
	cmd.Env = append(cmd.Env, env...)
	r, _ := runEnvelope(t, cmd)
	return r
}

// runEnvelope runs cmd, whose stdout is one envelope, and returns it with the
// exit status and what cmd printed on stderr.
func runEnvelope(t *testing.T, cmd *exec.Cmd) (layerRun, string) {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	r := layerRun{}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%q: %v", cmd.Args, err)
	}
	if err := json.Unmarshal(out, &r.env); err != nil {
		t.Fatalf("%q: stdout is not an envelope (%v):\n%s\nstderr: %s", cmd.Args, err, out, stderr.String())
	}
	return r, stderr.String()
}

// Each layer of the Linux sandbox taken away for real, the way a machine
// lacks it: the kernel refuses the system calls (a seccomp filter, as
// Docker's default profile refuses user namespaces and an old kernel has no
// Landlock), a sysctl forbids user namespaces, no cgroup hierarchy is
// mounted. For each, what a user checks: `--sandbox auto` runs the command
// and context.sandbox.missing names the layer and why, in one short line;
// without user namespaces, Landlock and the seccomp filter still apply; a
// command the policy lets through only because the sandbox contains it
// (eval of text it cannot read) is asked again, naming the missing layer,
// and does not run, unless the missing layer is a limit the policy does not
// count on; `--sandbox on` refuses with SANDBOX_UNAVAILABLE and says why.
func TestMissingLayers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and starts sandboxes")
	}
	bin := buildBinary(t)
	without := filepath.Join(filepath.Dir(bin), "without")
	if out, err := exec.Command("go", "build", "-o", without, "./testdata/without").CombinedOutput(); err != nil {
		t.Fatalf("go build without: %v\n%s", err, out)
	}
	base := runWrapped(t, bin, nil, visibleTempDir(t), "auto", "echo hi")
	if m := base.missing(); len(m) > 0 || base.env.Context.Sandbox == "off" {
		t.Skipf("this machine lacks a layer already, so none can be taken away: %v", base.env.Context.Sandbox)
	}
	if r := runWrapped(t, bin, nil, visibleTempDir(t), "auto", localCmd); r.env.Context.Policy == nil || !r.env.Context.Policy.Sandboxed {
		t.Fatalf("with every layer, %s: %s %+v %+v", localCmd, r.env.Status, r.env.Context.Policy, r.env.Error)
	}
	root := os.Getuid() == 0
	cases := []missingLayer{
		{name: "user namespaces refused, as by Docker's seccomp profile", wrap: []string{without, "-userns", "--"},
			layer: "userns", why: "EPERM", bare: true},
		{name: "user.max_user_namespaces is 0",
			wrap:  []string{"unshare", "--user", "--map-root-user", "sh", "-c", `echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"`, "sh"},
			layer: "userns", why: "ENOSPC", bare: true},
		{name: "no Landlock, as on an old kernel", wrap: []string{without, "-landlock", "--"},
			layer: "fs", why: "no Landlock (ENOSYS)"},
		{name: "no seccomp filters", wrap: []string{without, "-seccomp", "--"},
			layer: "seccomp", why: "no seccomp filter (EINVAL)"},
		{name: "no cgroup hierarchy mounted",
			wrap:  []string{"unshare", "--mount", "sh", "-c", `mount -t tmpfs -o ro,size=4k none /sys/fs/cgroup && exec "$@"`, "sh"},
			layer: "memory", why: "cannot make a cgroup", contained: true,
			skip: map[bool]string{false: "mounting over /sys/fs/cgroup needs root"}[root]},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.skip != "" {
				t.Skip(tc.skip)
			}
			if _, err := exec.LookPath(tc.wrap[0]); err != nil {
				t.Skipf("%s: %v", tc.wrap[0], err)
			}
			if out, err := exec.Command(tc.wrap[0], append(tc.wrap[1:], "true")...).CombinedOutput(); err != nil {
				t.Skipf("cannot take the layer away here: %q: %v %s", tc.wrap, err, out)
			}
			dir := visibleTempDir(t)
			r := tc.checkAuto(t, bin, dir)
			if tc.bare {
				tc.checkBare(t, bin, dir, r)
			}
			tc.checkEval(t, bin, dir)
			tc.checkSecrets(t, bin, dir)
			tc.checkOn(t, bin, dir)
		})
	}
}

// missingLayer is one case of TestMissingLayers: a layer taken away.
type missingLayer struct {
	name string
	wrap []string
	// layer and why: the report's entry starts with layer+": " and
	// contains why.
	layer, why string
	// contained: the policy still counts on the sandbox (the missing
	// layer is a limit, not containment).
	contained bool
	// bare: no session, but what needs no namespace still applies.
	bare bool
	skip string
}

const (
	// evalCmd is the command the sandbox contains and the policy cannot
	// read: eval of text from the environment (evalEnv). It leaves a file in
	// the root when it runs.
	evalCmd = `eval "$SG_LAYER_CMD"`
	evalEnv = "SG_LAYER_CMD=touch evaluated"
	// localCmd: with the network off, a connection to the loopback is
	// allowed only because the session's loopback is its own (nothing
	// listens on port 9).
	localCmd = "curl -s http://127.0.0.1:9/"
)

// checkAuto: --sandbox auto runs the command, and context.sandbox.missing
// says what is missing, in one short line. It returns the run.
func (tc missingLayer) checkAuto(t *testing.T, bin, dir string) layerRun {
	t.Helper()
	r := runWrapped(t, bin, tc.wrap, dir, "auto", "echo hi")
	if r.code != 0 || r.env.Status != envelope.Success || r.env.Data.Stdout != "hi\n" {
		t.Fatalf("auto: exit %d, %s %+v %+v", r.code, r.env.Status, r.env.Data, r.env.Error)
	}
	var entry string
	for _, m := range r.missing() {
		if strings.HasPrefix(m, tc.layer+": ") {
			entry = m
		}
	}
	if entry == "" || !strings.Contains(entry, tc.why) {
		t.Fatalf("auto: context.sandbox.missing = %q, want a %q entry saying %q", r.missing(), tc.layer, tc.why)
	}
	if strings.Contains(entry, "\n") || len(entry) > 240 {
		t.Errorf("auto: the %s entry is not one short line (%d bytes): %q", tc.layer, len(entry), entry)
	}
	return r
}

// checkBare: Landlock and the seccomp filter need no namespace: they apply
// (r, the auto run, and doctor say so), and a write the policy lets through
// (the project's script, which it does not read) stops at the kernel.
func (tc missingLayer) checkBare(t *testing.T, bin, dir string, r layerRun) {
	t.Helper()
	m, _ := r.env.Context.Sandbox.(map[string]any)
	if fs, _ := m["fs"].(string); !strings.HasPrefix(fs, "landlock-v") || m["seccomp"] != "filter" {
		t.Errorf("auto without user namespaces: context.sandbox = %v, want fs landlock-vN and seccomp filter", m)
	}
	doctor := exec.Command(tc.wrap[0], append(tc.wrap[1:], bin, "doctor", "--no-user-config", "--root", dir)...)
	doctor.Env = append(os.Environ(), "HOME="+visibleTempDir(t), "BASH_ALLOW_NETWORK=")
	out, err := doctor.Output()
	if err == nil || !strings.Contains(string(out), "no user namespaces here") || !strings.Contains(string(out), "fs:       landlock-v") ||
		!strings.Contains(string(out), "seccomp:  filter") || !strings.Contains(string(out), "  - userns: ") {
		t.Errorf("doctor without user namespaces (%v):\n%s", err, out)
	}
	victim := filepath.Join(visibleTempDir(t), "victim")
	// The project's own script, which the policy lets run even unconfined.
	if err := os.WriteFile(filepath.Join(dir, "build.sh"), []byte("echo harm > "+victim+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := runWrapped(t, bin, tc.wrap, dir, "auto", "sh build.sh")
	if _, err := os.Stat(victim); err == nil || w.env.Context.Policy == nil || w.env.Context.Policy.Decision != "allow" ||
		!strings.Contains(w.env.Data.Stderr, "Permission denied") {
		t.Errorf("auto without user namespaces: a write outside the root was not refused by the kernel (%s, policy %+v, stderr %q, victim %v)",
			w.env.Status, w.env.Context.Policy, w.env.Data.Stderr, err)
	}
}

// checkEval: the policy lets eval of what it cannot read run only where the
// sandbox contains it; otherwise it asks, naming the missing layer, and a
// connection to the loopback is refused.
func (tc missingLayer) checkEval(t *testing.T, bin, dir string) {
	t.Helper()
	r := runWrapped(t, bin, tc.wrap, dir, "auto", evalCmd, evalEnv)
	_, ranErr := os.Stat(filepath.Join(dir, "evaluated"))
	ran := ranErr == nil
	if tc.contained {
		if r.env.Status != envelope.Success || r.env.Context.Policy == nil || !r.env.Context.Policy.Sandboxed || !ran {
			t.Errorf("auto, %s missing: %s was not run as contained (%s, policy %+v, ran %v)", tc.layer, evalCmd, r.env.Status, r.env.Context.Policy, ran)
		}
		return
	}
	if r.env.Error == nil || r.env.Error.Code != envelope.ApprovalRequired || r.env.Error.Rule != "stored-code" || ran {
		t.Fatalf("auto, %s missing: %s got %s %+v (ran %v), want APPROVAL_REQUIRED (stored-code) and not run", tc.layer, evalCmd, r.env.Status, r.env.Error, ran)
	}
	if !strings.Contains(r.env.Error.Message, "lacks a layer ("+tc.layer+": ") {
		t.Errorf("auto: the ask does not say which layer is missing: %s", r.env.Error.Message)
	}
	if r.env.Context.Policy.Sandboxed {
		t.Errorf("auto: policy says sandboxed with %s missing: %+v", tc.layer, r.env.Context.Policy)
	}
	if r := runWrapped(t, bin, tc.wrap, dir, "auto", localCmd); r.env.Error == nil || r.env.Error.Code != envelope.PolicyDenied || r.env.Error.Rule != "network" {
		t.Errorf("auto, %s missing: %s got %s %+v, want POLICY_DENIED (network)", tc.layer, localCmd, r.env.Status, r.env.Error)
	}
}

// checkSecrets: where the session hides no secrets (no user namespace: no
// view of its own), the command is decided as no sandbox contains it, as
// --sandbox off decides: reading a credential, or a program given on the
// command line, is asked about. Where the view is built, a secret's read
// stays allowed: it is not there.
func (tc missingLayer) checkSecrets(t *testing.T, bin, dir string) {
	t.Helper()
	home := visibleTempDir(t)
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh/id_rsa"), []byte("LAYER-SECRET-MARKER\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unhidden := tc.bare
	for _, cmd := range []string{"cat ~/.ssh/id_rsa", `python3 -c "print(open('` + home + `/.ssh/id_rsa').read())"`} {
		r := runWrapped(t, bin, tc.wrap, dir, "auto", cmd, "HOME="+home)
		leaked := strings.Contains(r.env.Data.Stdout, "LAYER-SECRET-MARKER")
		if !unhidden {
			if leaked {
				t.Errorf("auto, %s missing: %s printed the secret", tc.layer, cmd)
			}
			continue
		}
		if leaked || r.env.Error == nil || r.env.Error.Code != envelope.ApprovalRequired {
			t.Errorf("auto, %s missing: %s got %s %+v (secret printed %v), want APPROVAL_REQUIRED as with --sandbox off", tc.layer, cmd, r.env.Status, r.env.Error, leaked)
		}
	}
}

// checkOn: --sandbox on refuses, and says why.
func (tc missingLayer) checkOn(t *testing.T, bin, dir string) {
	t.Helper()
	r := runWrapped(t, bin, tc.wrap, dir, "on", "echo hi")
	if r.code != exitShellgate || r.env.Error == nil || r.env.Error.Code != envelope.SandboxUnavailable || r.env.Data.Stdout != "" {
		t.Fatalf("on: exit %d, %s %+v, stdout %q; want exit %d and SANDBOX_UNAVAILABLE", r.code, r.env.Status, r.env.Error, r.env.Data.Stdout, exitShellgate)
	}
	if !strings.Contains(r.env.Error.Message, tc.layer+": ") || !strings.Contains(r.env.Error.Message, tc.why) {
		t.Errorf("on: the refusal does not say %q is missing (%s): %s", tc.layer, tc.why, r.env.Error.Message)
	}
	if !strings.Contains(strings.Join(r.missing(), "\n"), tc.layer+": ") {
		t.Errorf("on: context.sandbox.missing = %q, want the %s entry", r.missing(), tc.layer)
	}
}
