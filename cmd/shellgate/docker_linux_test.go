package main

import (
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/envelope"
)

// shellgate in a Docker container started with the default profile, as people
// run agents: Docker's seccomp profile refuses user namespaces, so there is
// no sandbox session. The image is built here from the repository, with
// nothing pulled: FROM scratch, a static shellgate and a static busybox for
// the shell. What a user checks: `--sandbox auto` runs the command,
// context.sandbox.missing says user namespaces are refused (EPERM), and what
// needs no namespace (the seccomp filter, Landlock) is applied: the project's
// own script, which the policy lets run, cannot write /etc; eval of
// text the policy cannot read, which the sandbox would contain, is asked
// again and does not run; `--sandbox on` refuses with SANDBOX_UNAVAILABLE.
//
// It needs a Docker engine (Debian's docker.io, dockerd running) and Debian's
// busybox-static; without them it is skipped, saying which is missing.
func TestDockerDefaultProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image and starts containers")
	}
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("no docker client: install Debian's docker.io")
	}
	// Bounds for a hung engine, not timings: each step takes seconds.
	dockerCmd := func(minutes time.Duration, args ...string) *exec.Cmd {
		ctx, cancel := context.WithTimeout(context.Background(), minutes*time.Minute)
		t.Cleanup(cancel)
		return exec.CommandContext(ctx, docker, args...)
	}
	if out, err := dockerCmd(1, "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("no Docker engine answers (start dockerd): %v: %s", err, strings.TrimSpace(string(out)))
	}
	busybox, err := exec.LookPath("busybox")
	if err == nil && !static(busybox) {
		err = os.ErrNotExist
	}
	if err != nil {
		t.Skip("needs a statically linked busybox for the image's shell: install Debian's busybox-static")
	}

	image := buildImage(t, dockerCmd, busybox)

	// run starts shellgate in a new container with Docker's defaults, after
	// the shell line before (outside shellgate), and says whether the command
	// left its file in the root, and whether /etc/victim, outside it, exists.
	run := func(mode, command, before string) (r layerRun, ran, harm bool) {
		t.Helper()
		cmd := dockerCmd(2, "run", "--rm", "-e", evalEnv, image, "sh", "-c",
			before+`
shellgate run --json --no-user-config --audit-log off --checkpoints off --sandbox "$1" -- "$2"; rc=$?
test -e evaluated && echo RAN >&2
test -e /etc/victim && echo HARM >&2
exit $rc`,
			"sh", mode, command)
		r, stderr := runEnvelope(t, cmd)
		return r, strings.Contains(stderr, "RAN"), strings.Contains(stderr, "HARM")
	}

	r, _, _ := run("auto", "echo hi", "")
	if r.code != 0 || r.env.Data.Stdout != "hi\n" {
		t.Fatalf("auto: exit %d, %s %+v %+v", r.code, r.env.Status, r.env.Data, r.env.Error)
	}
	if m := strings.Join(r.missing(), "\n"); !strings.HasPrefix(m, "userns: ") || !strings.Contains(m, "EPERM") {
		t.Errorf("auto: context.sandbox.missing = %q, want user namespaces refused (EPERM)", r.missing())
	}
	// What needs no namespace applies: the seccomp filter (Docker's profile
	// lets a process add its own), Landlock where the profile allows it.
	m, _ := r.env.Context.Sandbox.(map[string]any)
	if m["seccomp"] != "filter" {
		t.Errorf("auto: context.sandbox = %v, want the seccomp filter applied", m)
	} else {
		t.Logf("in Docker with the default profile: context.sandbox = %v", m)
	}
	// The project's own script, which the policy lets run: with Landlock,
	// its write outside the root fails, though root in the container may
	// write /etc.
	if fs, _ := m["fs"].(string); strings.HasPrefix(fs, "landlock-v") {
		r, _, harm := run("auto", "sh build.sh", `printf 'echo pwned > /etc/victim\n' > build.sh`)
		if harm || r.env.Context.Policy == nil || r.env.Context.Policy.Decision != "allow" || !strings.Contains(r.env.Data.Stderr, "Permission denied") {
			t.Errorf("auto: the project's script wrote outside the root (harm %v): %s %+v stderr %q", harm, r.env.Status, r.env.Context.Policy, r.env.Data.Stderr)
		}
		if _, _, harm := run("off", "sh build.sh", `printf 'echo pwned > /etc/victim\n' > build.sh`); !harm {
			t.Error("--sandbox off: the script could not write /etc/victim either, so the check above proves nothing")
		}
	} else {
		t.Logf("no Landlock in this container (Docker's profile refuses it): fs = %q", fs)
	}

	r, ran, _ := run("auto", evalCmd, "")
	if r.env.Error == nil || r.env.Error.Code != envelope.ApprovalRequired || ran ||
		!strings.Contains(r.env.Error.Message, "lacks a layer (userns: ") {
		t.Errorf("auto: eval got %s %+v (ran %v), want APPROVAL_REQUIRED naming the userns layer, and not run", r.env.Status, r.env.Error, ran)
	}

	r, _, _ = run("on", "echo hi", "")
	if r.code != exitShellgate || r.env.Error == nil || r.env.Error.Code != envelope.SandboxUnavailable ||
		!strings.Contains(r.env.Error.Message, "userns: ") || r.env.Data.Stdout != "" {
		t.Errorf("on: exit %d, %s %+v, stdout %q; want exit %d, SANDBOX_UNAVAILABLE naming userns", r.code, r.env.Status, r.env.Error, r.env.Data.Stdout, exitShellgate)
	}
}

// buildImage builds TestDockerDefaultProfile's image from this repository,
// with nothing pulled: FROM scratch, a static shellgate, busybox for the
// shell. It is removed when t ends.
func buildImage(t *testing.T, dockerCmd func(time.Duration, ...string) *exec.Cmd, busybox string) string {
	t.Helper()
	ctx := visibleTempDir(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(ctx, "bin"), 0o755))
	goBuild(t, false, filepath.Join(ctx, "bin", "shellgate"), ".")
	b, err := os.ReadFile(busybox)
	must(err)
	must(os.WriteFile(filepath.Join(ctx, "bin", "busybox"), b, 0o755))
	must(os.WriteFile(filepath.Join(ctx, "Dockerfile"), []byte(`FROM scratch
COPY bin /bin
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN ["/bin/busybox", "mkdir", "-p", "-m", "1777", "/tmp"]
ENV PATH=/bin HOME=/root
WORKDIR /proj
`), 0o644))
	image := "shellgate-layers-test:" + strconv.Itoa(os.Getpid())
	if out, err := dockerCmd(5, "build", "-q", "-t", image, ctx).CombinedOutput(); err != nil {
		t.Fatalf("docker build: %v\n%s", err, out)
	}
	t.Cleanup(func() { dockerCmd(1, "rmi", "-f", image).Run() })
	return image
}

// static reports whether the executable at path needs no dynamic loader.
func static(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}
