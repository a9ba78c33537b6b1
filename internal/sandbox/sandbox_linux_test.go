package sandbox

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"go.uber.org/goleak"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/cgroup"
	"github.com/shellgate/shellgate/internal/lane"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/sandbox/helper"
)

const fakeKey = "FAKEKEY-MARKER-1234"

// ownerEnv makes the test binary an owner that starts a session and waits to be
// killed (TestOwnerKilled).
const ownerEnv = "SHELLGATE_SANDBOX_TEST_OWNER"

func TestMain(m *testing.M) {
	if os.Getenv(ownerEnv) != "" {
		if root := os.Getenv(cgroupRootEnv); root != "" {
			cgroup.Root = root
		}
		os.Exit(owner())
	}
	goleak.VerifyTestMain(m)
}

// lab is a project root and things around it. It lives in /var/tmp, which a
// session shows read-only: there Landlock, not the session's own /tmp, is what
// keeps commands out.
// A lab is a project root, a victim beside it, a home with secrets, and a
// directory (shared) the session sees read-only: what tests stage for commands.
type lab struct{ base, root, outside, home, shared string }

func newLab(t *testing.T) *lab {
	t.Helper()
	parent := "/var/tmp"
	if !isDir(parent) {
		parent = t.TempDir()
	}
	base, err := os.MkdirTemp(parent, "shellgate-sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	l := &lab{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside"), home: filepath.Join(base, "home"), shared: filepath.Join(base, "shared")}
	must(t, os.MkdirAll(l.shared, 0o755))
	for path, content := range map[string]string{
		"root/README.md":          "readme\n",
		"root/.git/config":        "[core]\n",
		"root/.git/hooks/README":  "hooks\n",
		"root/.git/HEAD":          "ref: refs/heads/main\n",
		"root/.vscode/tasks.json": "{}\n",
		"outside/victim":          "victim\n",
		"home/.ssh/id_rsa":        fakeKey + "\n",
		"home/.aws/credentials":   fakeKey + "\n",
		"home/.netrc":             "machine x password " + fakeKey + "\n",
	} {
		p := filepath.Join(base, path)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return l
}

func (l *lab) spec() Spec {
	return Spec{
		Writable:  []string{l.root},
		Protected: []string{filepath.Join(l.root, ".git/hooks"), filepath.Join(l.root, ".git/config"), filepath.Join(l.root, ".vscode"), filepath.Join(l.root, ".envrc")},
		Hidden:    []string{filepath.Join(l.home, ".ssh"), filepath.Join(l.home, ".aws"), filepath.Join(l.home, ".netrc")},
		Home:      l.home,
		Visible:   []string{l.shared},
	}
}

// outsideIntact fails the test if anything outside the root changed.
func (l *lab) outsideIntact(t *testing.T, what string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(l.outside, "victim"))
	if err != nil || string(b) != "victim\n" {
		t.Errorf("%s: victim changed: %q %v", what, b, err)
	}
	entries, _ := os.ReadDir(l.outside)
	if len(entries) != 1 {
		t.Errorf("%s: outside now holds %d entries", what, len(entries))
	}
	if entries, _ := os.ReadDir(l.base); len(entries) != 4 { // root, outside, home, shared
		t.Errorf("%s: the lab now holds %d entries", what, len(entries))
	}
}

func start(t *testing.T, spec Spec) *Session {
	t.Helper()
	s, err := Start(spec)
	if err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if len(s.Report().Missing) > 0 {
		t.Logf("layers missing here: %s", s.Report())
	}
	return s
}

// run runs a bash command line in the session and returns its combined output
// and exit status.
func run(t *testing.T, s *Session, dir, command string, env ...string) (string, int) {
	t.Helper()
	l, out := launch(t, s, dir, command, env...)
	code, sig := l.Wait()
	if code == nil {
		t.Fatalf("%s: killed by %s\n%s", command, sig, out())
	}
	return out(), *code
}

// launch starts a bash command line in the session and returns it and a
// function that returns its combined output once it has ended.
func launch(t *testing.T, s *Session, dir, command string, env ...string) (runner.Launched, func() string) {
	t.Helper()
	r, w, err := os.Pipe()
	must(t, err)
	bash, err := exec.LookPath("bash")
	must(t, err)
	env = append([]string{"PATH=/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin", "HOME=" + filepath.Join(dir, "..", "home")}, env...)
	l, err := s.Launch([]string{bash, "--noprofile", "--norc", "-c", command}, env, dir, nil, w, w)
	w.Close()
	if err != nil {
		r.Close()
		t.Fatalf("launch: %v", err)
	}
	var out []byte
	done := make(chan struct{})
	go func() { out, _ = io.ReadAll(r); r.Close(); close(done) }()
	return l, func() string { <-done; return string(out) }
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Writes outside the root fail whatever tool or path makes them; inside they work.
func TestWritesConfined(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	if s.Report().Layers[LayerFS] == "" {
		t.Skipf("no Landlock here: %s", s.Report())
	}
	out := l.outside
	for _, cmd := range []string{
		"echo pwned > " + out + "/victim",
		": > " + out + "/victim",
		"rm -f " + out + "/victim",
		"echo x > " + out + "/PWNED",
		"python3 -c 'open(\"" + out + "/PWNED\", \"w\").write(\"x\")'",
		"perl -e 'unlink \"" + out + "/victim\"'",
		"cp README.md " + out + "/PWNED",
		"ln -s " + out + " esc && echo pwned > esc/PWNED",
		"mv " + out + "/victim stolen",
		"touch -d 2000-01-01 " + out + "/victim",
		"chmod 000 " + out + "/victim",
		"sed -i d " + out + "/victim",
		"dd if=/dev/zero of=" + out + "/victim bs=1 count=1",
		"mkdir " + out + "/newdir",
		"echo pwned > /proc/self/cwd/../outside/PWNED",
		"echo pwned > /dev/fd/../../../" + strings.TrimPrefix(out, "/") + "/PWNED",
		"tar -cf t.tar README.md && tar -C " + out + " -xf t.tar",
		"printf 'all:\\n\\ttouch " + out + "/PWNED\\n' > Makefile && make",
		"printf '#!/bin/sh\\nrm -f " + out + "/victim\\n' > x.sh && chmod +x x.sh && ./x.sh",
		"cp /bin/rm ./del && ./del -f " + out + "/victim",
		"git config --global core.hooksPath /x; echo x >> ~/.bashrc",
	} {
		run(t, s, l.root, cmd)
		l.outsideIntact(t, cmd)
	}
	got, code := run(t, s, l.root, "echo ok > f && mkdir -p a/b && mv f a/b/ && cat a/b/f && rm -r a")
	if code != 0 || got != "ok\n" {
		t.Errorf("writing inside the root: %d %q", code, got)
	}
}

// Protected paths inside the root stay read-only however they are reached,
// while the rest of .git is writable.
func TestProtectedPaths(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	hooks := filepath.Join(l.root, ".git/hooks")
	for _, cmd := range []string{
		"echo x > .git/hooks/pre-commit",
		"ln -s .git g && echo x > g/hooks/post-commit",
		"cp README.md .git/hooks/pre-push",
		"python3 -c 'open(\".git/hooks/post-merge\", \"w\")'",
		"tar -cf t.tar README.md && tar -C .git/hooks -xf t.tar",
		"cd .git && echo x > ./hooks/pre-rebase",
		"rm -rf .git/hooks",
		"mv .git/hooks h",
		"mv .git g && mkdir -p .git/hooks && echo x > .git/hooks/pre-commit",
		"cp -a .git g && rm -rf .git; mv g .git; echo x > .git/hooks/pre-commit",
		"python3 -c 'import os; os.rename(\".git\", \"g\"); os.makedirs(\".git/hooks\"); open(\".git/hooks/pre-commit\", \"w\")'",
		"ln .git/config c && echo '[alias]' >> c",
	} {
		run(t, s, l.root, cmd)
		entries, _ := os.ReadDir(hooks)
		if len(entries) != 1 || entries[0].Name() != "README" {
			t.Errorf("%s: .git/hooks now holds %v", cmd, entries)
		}
	}
	for _, cmd := range []string{"echo '[alias]' >> .git/config", "mv .git/config c", "rm -f .git/config", "sed -i s/core/x/ .git/config"} {
		run(t, s, l.root, cmd)
		if b, _ := os.ReadFile(filepath.Join(l.root, ".git/config")); string(b) != "[core]\n" {
			t.Errorf("%s: .git/config now %q", cmd, b)
		}
	}
	run(t, s, l.root, "echo {} > .vscode/settings.json; rm -f .vscode/tasks.json")
	if _, err := os.Stat(filepath.Join(l.root, ".vscode/settings.json")); err == nil {
		t.Error(".vscode was written")
	}
	if got, code := run(t, s, l.root, "echo x > .git/ORIG_HEAD && rm .git/ORIG_HEAD && echo ok"); code != 0 || got != "ok\n" {
		t.Errorf("the rest of .git: %d %q", code, got)
	}
}

// The session's /tmp is its own: shared by its commands, invisible to the host
// and to other sessions, and the host's /tmp with its sockets is out of reach.
func TestPrivateTmp(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	if s.Report().Layers[LayerTmp] != "private" {
		t.Skipf("no private /tmp here: %s", s.Report())
	}
	name := fmt.Sprintf("shellgate-test-%d", time.Now().UnixNano())
	if got, code := run(t, s, l.root, "echo data > /tmp/"+name+" && cat /tmp/"+name); code != 0 || got != "data\n" {
		t.Fatalf("writing /tmp: %d %q", code, got)
	}
	if _, err := os.Stat("/tmp/" + name); err == nil {
		os.Remove("/tmp/" + name)
		t.Fatal("the session's /tmp is the host's")
	}
	if got, _ := run(t, s, l.root, "cat /tmp/"+name); got != "data\n" {
		t.Errorf("the next command of the session does not see its /tmp: %q", got)
	}
	other := start(t, l.spec())
	if got, code := run(t, other, l.root, "cat /tmp/"+name); code == 0 {
		t.Errorf("another session sees this one's /tmp: %q", got)
	}

	// The host's daemon sockets under /run are out of sight with the network off.
	if got, _ := run(t, s, l.root, "ls -A /run"); strings.TrimSpace(got) != "" {
		t.Errorf("/run shows the host's: %q", got)
	}

	// A daemon's socket in the host's /tmp.
	sockDir := t.TempDir()
	ln, err := net.Listen("unix", filepath.Join(sockDir, "daemon.sock"))
	must(t, err)
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	run(t, s, l.root, "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\""+filepath.Join(sockDir, "daemon.sock")+"\")'")
	select {
	case <-accepted:
		t.Error("a command reached a daemon's socket in the host's /tmp")
	case <-time.After(100 * time.Millisecond):
	}
}

// Secret files read as empty, and shellgate's own environment is out of reach.
func TestSecretsHidden(t *testing.T) {
	lane.Live(t)
	t.Setenv("SHELLGATE_TEST_OPENAI_API_KEY", fakeKey)
	l := newLab(t)
	s := start(t, l.spec())
	for _, cmd := range []string{
		"cat ~/.ssh/id_rsa", "ls -la ~/.ssh", "cat ~/.aws/credentials", "cat ~/.netrc", "grep -r FAKE ~ 2>&1",
		"cat /proc/$PPID/environ", "cat /proc/1/environ", "cat /proc/*/environ", "tr '\\0' '\\n' < /proc/$PPID/environ | grep -E 'FAKE'",
		"cat /proc/1/cmdline; ls /proc/1/",
	} {
		if got, _ := run(t, s, l.root, cmd); strings.Contains(got, "FAKEKEY") {
			t.Errorf("%s: the secret leaked:\n%s", cmd, got)
		}
	}
	if got, _ := run(t, s, l.root, "ps -e -o args= | grep -c . "); strings.TrimSpace(got) == "" {
		t.Error("ps shows nothing")
	}
}

// With the network off a command reaches nothing outside its session, by any
// protocol; within the session, a server started by one command answers the next.
func TestNetwork(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	if s.Report().Layers[LayerNet] != "netns" {
		t.Skipf("no network namespace here: %s", s.Report())
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer tcp.Close()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	must(t, err)
	defer udp.Close()
	received := make(chan string, 10)
	go func() {
		for {
			c, err := tcp.Accept()
			if err != nil {
				return
			}
			received <- "tcp"
			c.Close()
		}
	}()
	go func() {
		buf := make([]byte, 100)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			received <- "udp"
		}
	}()
	tp := strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port)
	up := strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)
	for _, cmd := range []string{
		"exec 3<>/dev/tcp/127.0.0.1/" + tp + "; echo leak >&3",
		"echo leak > /dev/udp/127.0.0.1/" + up,
		"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", " + tp + "), 1)'",
		"python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"x\", (\"127.0.0.1\", " + up + "))'",
		"python3 -c 'import socket; s=socket.socket(socket.AF_INET,socket.SOCK_STREAM,262); s.connect((\"127.0.0.1\"," + tp + "))'",
		"exec 3<>/dev/tcp/1.1.1.1/443",
		"ip link | grep -c '^[0-9]'",
	} {
		out, _ := run(t, s, l.root, cmd)
		if strings.HasPrefix(cmd, "ip link") && strings.TrimSpace(out) != "1" {
			t.Errorf("the session has other interfaces than lo:\n%s", out)
		}
	}
	select {
	case proto := <-received:
		t.Errorf("the host's loopback received a %s connection from the session", proto)
	case <-time.After(200 * time.Millisecond):
	}

	run(t, s, l.root, "python3 -m http.server 18765 --bind 127.0.0.1 >/dev/null 2>&1 &")
	got, _ := run(t, s, l.root, "for i in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/18765) 2>/dev/null && echo reached && break; sleep 0.05; done")
	if got != "reached\n" {
		t.Errorf("a server started in the background does not answer the next command: %q", got)
	}
}

// With the network on, the host's network is the session's.
func TestNetworkOn(t *testing.T) {
	l := newLab(t)
	spec := l.spec()
	spec.Network = true
	s := start(t, spec)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	if got, code := run(t, s, l.root, "exec 3<>/dev/tcp/127.0.0.1/"+port+" && echo ok"); code != 0 || got != "ok\n" {
		t.Errorf("network on, host loopback unreachable: %d %q", code, got)
	}
}

// Commands run without capabilities: they cannot undo the mounts.
func TestNoCapabilities(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	got, _ := run(t, s, l.root, "grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status")
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if !strings.HasSuffix(line, "0000000000000000") {
			t.Errorf("capabilities left: %s", line)
		}
	}
	for _, cmd := range []string{"umount ~/.ssh", "umount -l /tmp", "mount -t tmpfs x " + l.outside, "mount -o remount,rw " + l.root + "/.git/hooks", "unshare -rm sh -c 'umount -l ~/.ssh; cat ~/.ssh/id_rsa'"} {
		if got, _ := run(t, s, l.root, cmd); strings.Contains(got, "FAKEKEY") {
			t.Errorf("%s revealed a secret", cmd)
		}
	}
	if got, _ := run(t, s, l.root, "cat ~/.ssh/id_rsa; ls /usr/bin | grep -x bash"); strings.Contains(got, "FAKEKEY") || !strings.Contains(got, "bash") {
		t.Errorf("after the mount attempts: %q", got)
	}
}

// Launch reports a program that cannot run as the operating system does.
func TestLaunchErrors(t *testing.T) {
	l := newLab(t)
	s := start(t, l.spec())
	_, err := s.Launch([]string{filepath.Join(l.root, "missing")}, nil, l.root, nil, nil, nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing program: %v", err)
	}
	_, err = s.Launch([]string{filepath.Join(l.root, "README.md")}, nil, l.root, nil, nil, nil)
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("not executable: %v", err)
	}
	_, err = s.Launch([]string{"/bin/true"}, nil, filepath.Join(l.root, "nope"), nil, nil, nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
}

// A fork bomb stops at the session's process limit, and only the bomb: the
// command that reached the limit is stopped and its notes say why, while the
// session, a job started before the bomb, and the next command live on. The
// helper, which starts every command, is not counted in the limit: were it,
// it could not make a thread at the limit, and the kernel would end the
// session, the job with it.
func TestProcessLimit(t *testing.T) {
	lane.Live(t)
	s, l := limitedWithJob(t, "6010.5"+runTag)
	// bash retries a fork the limit refused, for seconds: the bomb goes on
	// at the limit until it is stopped.
	bomb, out := launch(t, s, l.root, "while :; do sleep 6011.5"+runTag+" & done")
	ended := make(chan struct{})
	var code *int
	var sig string
	go func() {
		code, sig = bomb.Wait()
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatalf("the bomb was not stopped within 10s (%d of its processes running)", len(procsNamed("6011.5"+runTag)))
	}
	notes := bomb.(runner.Noter).Notes()
	if code != nil || sig != "SIGKILL" || len(notes) == 0 || notes[0] != OverLimitNote(100) {
		t.Errorf("the bomb ended with exit %v, signal %q, notes %q; want SIGKILL and the limit's note\n%s", code, sig, notes, out())
	}
	if !s.Alive() {
		t.Fatalf("the session ended with the bomb: %s", s.errBuf.String())
	}
	for deadline := time.Now().Add(2 * time.Second); len(procsNamed("6011.5"+runTag)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("%d of the bomb's processes outlived it", len(procsNamed("6011.5"+runTag)))
			break
		}
	}
	if len(procsNamed("6010.5"+runTag)) != 1 {
		t.Error("the job started before the bomb did not outlive it")
	}
	if got, code := run(t, s, l.root, "echo after"); code != 0 || got != "after\n" {
		t.Errorf("the command after the bomb: exit %d, %q", code, got)
	}
}

// A bomb left running by a command whose call has returned is stopped at
// the limit all the same, and since no envelope of that command is still to
// come, the next call is told (TakeNotes); the job beside it lives on.
func TestProcessLimitAfterTheCall(t *testing.T) {
	lane.Live(t)
	s, l := limitedWithJob(t, "6013.5"+runTag)
	if out, code := run(t, s, l.root, "(while :; do sleep 6014.5"+runTag+" & done) >/dev/null 2>&1 & exit 0"); code != 0 {
		t.Fatalf("the command: exit %d, %q", code, out)
	}
	leftBombStopped(t, s, "6014.5"+runTag)
	if again := s.TakeNotes(); len(again) > 0 {
		t.Errorf("the notes were told twice: %q", again)
	}
	for deadline := time.Now().Add(2 * time.Second); len(procsNamed("6014.5"+runTag)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the bomb's processes outlived it", len(procsNamed("6014.5"+runTag)))
		}
	}
	if len(procsNamed("6013.5"+runTag)) != 1 || !s.Alive() {
		t.Errorf("the job did not outlive the bomb (session alive: %v)", s.Alive())
	}
	if got, code := run(t, s, l.root, "echo after"); code != 0 || got != "after\n" {
		t.Errorf("the command after the bomb: exit %d, %q", code, got)
	}
}

// While only jobs left by commands that have ended run (a dev server between
// calls), the limit's watch looks less and less often, down to once a second,
// and still stops a fork bomb such a job starts.
func TestProcessLimitWatchOfLeftJobs(t *testing.T) {
	lane.Live(t)
	s, l := limited(t)
	if out, code := run(t, s, l.root, "(sleep 3; while :; do sleep 6015.5"+runTag+" & done) >/dev/null 2>&1 & exit 0"); code != 0 {
		t.Fatalf("the command: exit %d, %q", code, out)
	}
	before := s.limitLooks.Load()
	time.Sleep(2500 * time.Millisecond)
	// At a tenth of a second: 25 looks; doubling from it: 0.1, 0.3, 0.7, 1.5 s.
	if looks := s.limitLooks.Load() - before; looks > 6 {
		t.Errorf("%d looks in 2.5 s while only a job ran", looks)
	}
	leftBombStopped(t, s, "6015.5"+runTag)
	if got, code := run(t, s, l.root, "echo after"); code != 0 || got != "after\n" {
		t.Errorf("the command after the bomb: exit %d, %q", code, got)
	}
}

// The limit's watch starts once a command has run limitEvery, when it
// looked first before: commands that end sooner leaving nothing behind, as
// most of an agent's do, cost it no wake-up; one that runs longer is looked
// at while it runs.
func TestLimitWatchWaitsForALongerCommand(t *testing.T) {
	lane.Live(t)
	s, l := limited(t)
	for range 3 {
		if out, code := run(t, s, l.root, "true"); code != 0 {
			t.Fatalf("true: exit %d, %q", code, out)
		}
	}
	time.Sleep(3 * limitEvery)
	if wakes, looks := s.limitWakes.Load(), s.limitLooks.Load(); wakes != 0 || looks != 0 {
		t.Errorf("three quick commands woke the limit's watch %d times (%d looks)", wakes, looks)
	}
	if out, code := run(t, s, l.root, "sleep 0.5"); code != 0 {
		t.Fatalf("sleep: exit %d, %q", code, out)
	}
	if wakes, looks := s.limitWakes.Load(), s.limitLooks.Load(); wakes != 1 || looks < 2 {
		t.Errorf("a command of 0.5 s: %d wakes of the limit's watch, %d looks", wakes, looks)
	}
}

// leftBombStopped waits for the note that a bomb (sleep tag) a command left
// was stopped at the session's limit of 100.
func leftBombStopped(t *testing.T, s *Session, tag string) {
	t.Helper()
	var notes []string
	for deadline := time.Now().Add(10 * time.Second); len(notes) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the bomb was not stopped within 10s (%d of its processes running)", len(procsNamed(tag)))
		}
		notes = s.TakeNotes()
	}
	if len(notes) != 1 || notes[0] != LeftOverLimitNote(100) {
		t.Errorf("notes %q, want the limit's note for what a command left", notes)
	}
}

// limited starts a session limited to 100 processes, skipping where the
// limit is no cgroup's.
func limited(t *testing.T) (*Session, *lab) {
	t.Helper()
	l := newLab(t)
	spec := l.spec()
	spec.Limits.Procs = 100
	s := start(t, spec)
	if s.Report().Layers[LayerProcs] != "cgroup" {
		t.Skipf("no cgroup process limit here (%s)", s.Report())
	}
	return s, l
}

// limitedWithJob starts a limited session and in it a job, `sleep tag`,
// running once it returns.
func limitedWithJob(t *testing.T, tag string) (*Session, *lab) {
	t.Helper()
	s, l := limited(t)
	job, _ := launch(t, s, l.root, "exec sleep "+tag)
	t.Cleanup(func() { s.KillTree(job.PID(), syscall.SIGKILL) })
	for deadline := time.Now().Add(5 * time.Second); len(procsNamed(tag)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the job did not start")
		}
	}
	return s, l
}

// A command that reaches the limit and gives its processes back at once (a
// program that stops forking at the first refusal and ends its children)
// leaves nothing to stop: the job beside it is not blamed for the refusal.
func TestLimitReachedAndLeftSparesJobs(t *testing.T) {
	lane.Live(t)
	s, l := limitedWithJob(t, "6012.5"+runTag)
	hits, _ := s.group.LimitHits(nil)
	forks, out := launch(t, s, l.root, `perl -e 'while (defined(my $p = fork)) { if (!$p) { sleep 30; exit } } $SIG{TERM} = "IGNORE"; kill "TERM", -$$; print "refused\n"'`)
	// On a busy machine a look may come while the forks still hold the
	// limit, and stop them: the rule at work, not what this test is about.
	if code, sig := forks.Wait(); (code == nil || *code != 0 || out() != "refused\n") && sig != "SIGKILL" {
		t.Fatalf("the forks: exit %v %s, %q", code, sig, out())
	}
	if now, _ := s.group.LimitHits(nil); now <= hits {
		t.Fatalf("no fork refused (%d refusals before, %d after)", hits, now)
	}
	time.Sleep(3 * limitEvery)
	if len(procsNamed("6012.5"+runTag)) != 1 {
		t.Error("the job was stopped for a refusal it had no part in")
	}
}

// On v1 (hybrid included), where cgroups hold threads, the process limit is
// on the commands' pids cgroup, below the session's: the one thread of the
// helper that forks the commands is there, and so is every command, while the
// helper's other threads are in the session's cgroup, outside the limit.
func TestLimitLeavesTheHelperOut(t *testing.T) {
	lane.Live(t)
	if cgroup.IsV2(cgroup.Root) {
		t.Skip("cgroup2: TestCgroupV2Session")
	}
	l := newLab(t)
	s := start(t, l.spec())
	if s.group == nil || s.Report().Layers[LayerProcs] != "cgroup" {
		t.Skipf("no cgroup process limit here (%s)", s.Report())
	}
	pids := func(cgroupFile string) string {
		b, _ := os.ReadFile(cgroupFile)
		for _, line := range strings.Split(string(b), "\n") {
			if parts := strings.SplitN(line, ":", 3); len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "pids") {
				return parts[2]
			}
		}
		return ""
	}
	session := strings.TrimPrefix(s.group.Dir(), filepath.Join(cgroup.Root, "pids"))
	cmds := session + "/cmds"
	if out, code := run(t, s, l.root, "cat /proc/self/cgroup"); code != 0 || !strings.Contains(out, ":pids:"+cmds+"\n") {
		t.Errorf("the command is not in the commands' pids cgroup %s (exit %d):\n%s", cmds, code, out)
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/cgroup", s.helper.Process.Pid))
	inCmds := 0
	for _, task := range tasks {
		switch got := pids(task); got {
		case cmds:
			inCmds++
		case session:
		default:
			t.Errorf("a thread of the helper is in pids cgroup %q, neither the session's nor the commands'", got)
		}
	}
	if inCmds != 1 || len(tasks) < 2 {
		t.Errorf("%d of the helper's %d threads in the commands' cgroup, want its launcher alone", inCmds, len(tasks))
	}
	if b, err := os.ReadFile(filepath.Join(s.group.Dir(), "pids.max")); err != nil || strings.TrimSpace(string(b)) != "max" {
		t.Errorf("the session's pids.max is %q (%v), want max: the limit is the commands'", b, err)
	}
}

// Close kills every process of the session, however it left its group,
// session and environment.
func TestCloseKillsEverything(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	run(t, s, l.root, "setsid -f env -i sleep 6001.5"+runTag+" >/dev/null 2>&1; nohup sleep 6002.5"+runTag+" >/dev/null 2>&1 & (setsid sleep 6003.5"+runTag+" >/dev/null 2>&1 &) ; true")
	// The shell returns before its background children have all exec'd sleep.
	for deadline := time.Now().Add(5 * time.Second); len(procsNamed("6001.5"+runTag, "6002.5"+runTag, "6003.5"+runTag)) != 3; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the escapes did not start: %v", procsNamed("6001.5"+runTag, "6002.5"+runTag, "6003.5"+runTag))
		}
	}
	must(t, s.Close())
	if left := procsNamed("6001.5"+runTag, "6002.5"+runTag, "6003.5"+runTag); len(left) > 0 {
		t.Errorf("survived Close: %v", left)
	}
}

// When shellgate itself is killed with SIGKILL, the session dies with it.
func TestOwnerKilled(t *testing.T) {
	lane.Live(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), ownerEnv+"=1", runTagEnv+"="+runTag)
	out, err := cmd.StdoutPipe()
	must(t, err)
	must(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Skipf("the owner could not start a session: %s", line)
	}
	// The escaped one may not have exec'd sleep yet.
	for deadline := time.Now().Add(5 * time.Second); len(procsNamed("6004.5"+runTag, "6005.5"+runTag)) != 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the session's processes did not start: %v", procsNamed("6004.5"+runTag, "6005.5"+runTag))
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for len(procsNamed("6004.5"+runTag, "6005.5"+runTag)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if left := procsNamed("6004.5"+runTag, "6005.5"+runTag); len(left) > 0 {
		t.Errorf("survived their owner's SIGKILL: %v", left)
	}
}

// owner starts a session with a running command and an escaped one, says
// ready, and waits to be killed.
func owner() int {
	s, err := Start(Spec{})
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	r, w, _ := os.Pipe()
	l, err := s.Launch([]string{"/bin/sh", "-c", "setsid -f env -i sleep 6004.5" + runTag + "; echo started; exec sleep 6005.5" + runTag}, []string{"PATH=/usr/bin:/bin"}, "/", nil, w, nil)
	w.Close()
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	bufio.NewReader(r).ReadString('\n')
	for len(procsNamed("6004.5"+runTag, "6005.5"+runTag)) < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Println("ready")
	l.Wait()
	return 0
}

// runTag ends the numbers tests give their sleeps to find them by (sleep
// 7001.5<pid>): procsNamed looks machine-wide, where another run of these
// tests may be sleeping the same number. A test binary the tests start
// (TestOwnerKilled) is given theirs.
var runTag = cmp.Or(os.Getenv(runTagEnv), strconv.Itoa(os.Getpid()))

const runTagEnv = "SHELLGATE_TEST_RUNTAG"

// procsNamed lists live processes whose command line has one of the args, as
// "pid cmdline".
func procsNamed(args ...string) []string {
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || len(b) == 0 {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			continue
		}
		for _, a := range strings.Split(string(b), "\x00") {
			for _, want := range args {
				if a == want {
					found = append(found, e.Name()+" "+strings.ReplaceAll(string(b), "\x00", " "))
				}
			}
		}
	}
	return found
}

// A command reads the stdin it is given.
func TestStdin(t *testing.T) {
	l := newLab(t)
	s := start(t, l.spec())
	in, err := os.Open(filepath.Join(l.root, "README.md"))
	must(t, err)
	defer in.Close()
	r, w, _ := os.Pipe()
	p, err := s.Launch([]string{"/bin/cat"}, nil, l.root, in, w, nil)
	w.Close()
	must(t, err)
	out, _ := io.ReadAll(r)
	r.Close()
	if code, _ := p.Wait(); code == nil || *code != 0 || string(out) != "readme\n" {
		t.Errorf("cat of stdin: %v %q", code, out)
	}
}

// Commands that exit at once are reported like any other: the helper reports a
// command's PID before it can reap it (the kernel refuses credentials naming a
// PID that is gone, and the report was once lost that way).
func TestQuickCommands(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	for range 300 {
		p, err := s.Launch([]string{"/bin/true"}, nil, l.root, nil, nil, nil)
		must(t, err)
		if code, sig := p.Wait(); code == nil || *code != 0 {
			t.Fatalf("true: %v %s", code, sig)
		}
	}
}

// A protected path that does not exist when the session starts (a project
// without git, then `git init`) is read-only from the end of the command that
// created it, and that command is told so; one a background job creates is
// read-only from the next command on.
func TestProtectedPathsCreatedLater(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	must(t, os.RemoveAll(filepath.Join(l.root, ".git")))
	must(t, os.RemoveAll(filepath.Join(l.root, ".vscode")))
	s := start(t, l.spec())

	launched, out := launch(t, s, l.root, "mkdir -p .git/hooks && echo '[core]' > .git/config && echo made")
	if code, _ := launched.Wait(); code == nil || *code != 0 || out() != "made\n" {
		t.Fatalf("git init's part failed: %v %q", code, out())
	}
	notes := launched.(interface{ Notes() []string }).Notes()
	if len(notes) != 1 || !strings.Contains(notes[0], ".git/hooks, .git/config") || strings.Contains(notes[0], l.root) {
		t.Errorf("the command that created them was told %q", notes)
	}
	for _, cmd := range []string{
		"echo x > .git/hooks/pre-commit",
		"echo '[alias]' >> .git/config",
		"mv .git g && mkdir -p .git/hooks && echo x > .git/hooks/pre-commit",
		"python3 -c 'open(\".git/hooks/post-merge\", \"w\")'",
		"rm -rf .git/hooks",
	} {
		run(t, s, l.root, cmd)
		if entries, _ := os.ReadDir(filepath.Join(l.root, ".git/hooks")); len(entries) != 0 {
			t.Errorf("%s: .git/hooks now holds %v", cmd, entries)
		}
		if b, _ := os.ReadFile(filepath.Join(l.root, ".git/config")); string(b) != "[core]\n" {
			t.Errorf("%s: .git/config now %q", cmd, b)
		}
	}
	if got, code := run(t, s, l.root, "echo ref > .git/HEAD && cat .git/HEAD"); code != 0 || got != "ref\n" {
		t.Errorf("the rest of .git: %d %q", code, got)
	}

	// A background job makes .vscode after its command has ended.
	run(t, s, l.root, "(sleep 0.3; mkdir .vscode) >/dev/null 2>&1 &")
	// The guard, which looks every 200 ms while a job runs, may have moved
	// it already.
	made := func() bool {
		moved, _ := filepath.Glob(filepath.Join(l.root, QuarantineDir, "*", ".vscode"))
		return isDir(filepath.Join(l.root, ".vscode")) || len(moved) > 0
	}
	for deadline := time.Now().Add(5 * time.Second); !made(); {
		if time.Now().After(deadline) {
			t.Fatal("the job did not make .vscode")
		}
		time.Sleep(20 * time.Millisecond)
	}
	run(t, s, l.root, "echo {} > .vscode/tasks.json")
	if entries, _ := os.ReadDir(filepath.Join(l.root, ".vscode")); len(entries) != 0 {
		t.Errorf(".vscode, made by a job, now holds %v", entries)
	}

	// A protected name made a symlink to the root itself does not make the
	// helper bind the whole project read-only.
	run(t, s, l.root, "ln -s . .envrc")
	if got, code := run(t, s, l.root, "echo ok > x && cat x"); code != 0 || got != "ok\n" {
		t.Errorf("after .envrc -> .: %d %q", code, got)
	}
}

// The helper keeps capabilities on the threads that do not start commands, to
// protect paths that appear later. Commands cannot take it over: they cannot
// trace it, read its memory or stop it.
func TestHelperOutOfReach(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	const ptrace = `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for tid in os.listdir("/proc/1/task"):
    if libc.ptrace(16, int(tid), 0, 0) == 0:  # PTRACE_ATTACH
        print("ATTACHED", tid)
`
	for _, cmd := range []string{
		"python3 -c \"open('/proc/1/mem', 'rb').read(1); print('READ')\"",
		"python3 -c '" + strings.ReplaceAll(ptrace, "'", `'"'"'`) + "'",
		"for t in /proc/1/task/*; do kill -STOP ${t##*/}; done; python3 -c 'import os,signal\nfor t in os.listdir(\"/proc/1/task\"): os.kill(int(t), signal.SIGSTOP)'",
		"nsenter -t 1 -m -- umount -l " + filepath.Join(l.home, ".ssh"),
	} {
		got, _ := run(t, s, l.root, cmd)
		if strings.Contains(got, "READ") || strings.Contains(got, "ATTACHED") {
			t.Errorf("%s: %s", cmd, got)
		}
		if got, _ := run(t, s, l.root, "echo ok; cat ~/.ssh/id_rsa"); !strings.HasPrefix(got, "ok\n") || strings.Contains(got, fakeKey) {
			t.Errorf("after %s: %q", cmd, got)
		}
	}
}

// A protected name that is a symlink cannot be replaced, and what it leads to
// in the root is read-only; one that leads out of the root stays as it is.
func TestProtectedSymlink(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	must(t, os.MkdirAll(filepath.Join(l.root, "envs"), 0o755))
	must(t, os.WriteFile(filepath.Join(l.root, "envs/dev"), []byte("dev\n"), 0o644))
	must(t, os.Symlink("envs/dev", filepath.Join(l.root, ".envrc")))
	s := start(t, l.spec())
	for _, cmd := range []string{
		"rm -f .envrc; echo evil > .envrc",
		"echo evil > x && mv -f x .envrc",
		"python3 -c 'import os; open(\"x\", \"w\").write(\"evil\"); os.replace(\"x\", \".envrc\")'",
		"echo evil >> envs/dev",
		"ln -sfn x .envrc",
	} {
		run(t, s, l.root, cmd)
		if link, err := os.Readlink(filepath.Join(l.root, ".envrc")); err != nil || link != "envs/dev" {
			t.Errorf("%s: .envrc is now %q %v", cmd, link, err)
		}
		if b, _ := os.ReadFile(filepath.Join(l.root, "envs/dev")); string(b) != "dev\n" {
			t.Errorf("%s: envs/dev now %q", cmd, b)
		}
	}
	if got, code := run(t, s, l.root, "echo ok > envs/other && cat envs/other"); code != 0 || got != "ok\n" {
		t.Errorf("the rest of envs: %d %q", code, got)
	}
}

// With a quarantine, a protected path a command creates is moved there, into a
// read-only directory of its own, unless the command was approved
// (KeepCreated); one a job creates between commands is moved when the next
// starts.
func TestQuarantine(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	must(t, os.RemoveAll(filepath.Join(l.root, ".git")))
	must(t, os.RemoveAll(filepath.Join(l.root, ".vscode")))
	spec := quarantineSpec(l)
	spec.Protected = append(spec.Protected, filepath.Join(l.root, ".cursor"))
	s := start(t, spec)
	notesOf := func(l runner.Launched) string { return strings.Join(l.(interface{ Notes() []string }).Notes(), "\n") }
	quarantined := func(name string) []string {
		got, _ := filepath.Glob(filepath.Join(spec.Quarantine, "[0-9]*", name))
		return got
	}

	cmd, out := launch(t, s, l.root, `python3 -c 'import os; os.makedirs(".vscode"); open(".vscode/settings.json", "w").write("{\"chat.tools.autoApprove\": true}")'`)
	cmd.Wait()
	out()
	if _, err := os.Lstat(filepath.Join(l.root, ".vscode")); err == nil {
		t.Error(".vscode stayed in the root")
	}
	moved := quarantined(".vscode")
	if len(moved) != 1 || !strings.Contains(notesOf(cmd), "Moved .vscode to .shellgate-quarantine/") {
		t.Fatalf("quarantined %v; notes %q", moved, notesOf(cmd))
	}
	item := filepath.Dir(moved[0])
	for _, attack := range []string{
		"mv .shellgate-quarantine/*/.vscode .vscode",
		"cp -a .shellgate-quarantine/*/.vscode .vscode2 && mv .vscode2 .vscode", // a copy is a new .vscode: moved too
		"echo x > .shellgate-quarantine/*/.vscode/settings.json",
		"rm -rf .shellgate-quarantine",
	} {
		run(t, s, l.root, attack)
		if b, err := os.ReadFile(filepath.Join(moved[0], "settings.json")); err != nil || !strings.Contains(string(b), "autoApprove") {
			t.Errorf("%s: the quarantined file is now %q %v", attack, b, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(l.root, ".vscode")); err == nil {
		t.Error("a copy of the quarantined .vscode is back in the root")
	}
	if entries, _ := os.ReadDir(item); len(entries) != 1 {
		t.Errorf("the item holds %v", entries)
	}

	// Approved, having been shown .claude/settings.json: that is kept where
	// it is, read-only; the .cursor it also made, which the user was not
	// shown, is moved.
	shown := KeepCreated([]string{filepath.Join(l.root, ".claude/settings.json")})
	cmd, out = launch(t, s, l.root, "mkdir .claude .cursor && echo '{}' > .claude/settings.json && echo '{}' > .cursor/mcp.json", shown)
	cmd.Wait()
	out()
	if _, err := os.Stat(filepath.Join(l.root, ".claude/settings.json")); err != nil || !strings.Contains(notesOf(cmd), "created .claude, which the sandbox protects only from now on") {
		t.Errorf("an approved command's .claude: %v; notes %q", err, notesOf(cmd))
	}
	if _, err := os.Lstat(filepath.Join(l.root, ".cursor")); err == nil || len(quarantined(".cursor")) != 1 || !strings.Contains(notesOf(cmd), "Moved .cursor to .shellgate-quarantine/") {
		t.Errorf("the .cursor an approval did not name stayed (%v), quarantined %v; notes %q", err, quarantined(".cursor"), notesOf(cmd))
	}
	if got, _ := run(t, s, l.root, "echo x > .claude/settings.json; echo keep=$SHELLGATE_SANDBOX_KEEP_CREATED", shown); !strings.Contains(got, "keep=\n") {
		t.Errorf("the keep marker reached the command: %q", got)
	}

	// What git makes is moved like the rest.
	run(t, s, l.root, "mkdir -p .git/hooks && echo '[core]' > .git/config")
	if _, err := os.Stat(filepath.Join(l.root, ".git/config")); err == nil || len(quarantined(".git")) != 2 {
		t.Errorf(".git/config: %v, quarantined %v", err, quarantined(".git"))
	}

	// Made on the host while nothing of the session runs: the user's own, kept.
	before := len(quarantined(".vscode"))
	must(t, os.MkdirAll(filepath.Join(l.root, ".vscode"), 0o755))
	run(t, s, l.root, "echo x > .vscode/x")
	if _, err := os.Stat(filepath.Join(l.root, ".vscode")); err != nil || len(quarantined(".vscode")) != before {
		t.Errorf("the host's .vscode: %v, quarantined %v", err, quarantined(".vscode"))
	}
	if _, err := os.Stat(filepath.Join(l.root, ".vscode/x")); err == nil {
		t.Error("the host's .vscode is writable in the session")
	}

	// A job that wrote .cursor after its command ended, and ended too before
	// the next command: moved all the same.
	cursors := len(quarantined(".cursor"))
	run(t, s, l.root, "(sleep 0.2"+runTag+"; mkdir .cursor) >/dev/null 2>&1 &")
	// The guard, which looks every 200 ms while a job runs, may have moved
	// it already.
	made := func() bool { return isDir(filepath.Join(l.root, ".cursor")) || len(quarantined(".cursor")) > cursors }
	for deadline := time.Now().Add(5 * time.Second); !made() || len(procsNamed("0.2"+runTag)) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the job did not make .cursor and end")
		}
	}
	run(t, s, l.root, "true")
	if len(quarantined(".cursor")) != cursors+1 {
		t.Errorf("a finished job's .cursor was not moved: %v", quarantined(".cursor"))
	}

	// A job's .envrc, made after its command ended, is moved (by the guard
	// or when the next starts) and the next command is told.
	run(t, s, l.root, "(sleep 0.3; echo evil > .envrc; sleep 30) >/dev/null 2>&1 &")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Lstat(filepath.Join(l.root, ".envrc")); err == nil || len(quarantined(".envrc")) > 0 { // the guard's, maybe
			break
		} else if time.Now().After(deadline) {
			t.Fatal("the job did not make .envrc")
		}
	}
	cmd, out = launch(t, s, l.root, "true")
	cmd.Wait()
	out()
	if len(quarantined(".envrc")) != 1 || !strings.Contains(notesOf(cmd), "Since the last command") {
		t.Errorf(".envrc quarantined %v; notes %q", quarantined(".envrc"), notesOf(cmd))
	}
	l.outsideIntact(t, "quarantine")
}

// A quarantine directory a command replaced with a symlink out of the root does
// not make the helper move anything there: the path is moved aside in place.
func TestQuarantineSymlinked(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	must(t, os.RemoveAll(filepath.Join(l.root, ".vscode")))
	spec := quarantineSpec(l)
	s := start(t, spec)
	run(t, s, l.root, "ln -s "+l.outside+" .shellgate-quarantine && python3 -c 'import os; os.makedirs(\".vscode\")'")
	l.outsideIntact(t, "symlinked quarantine")
	aside, _ := filepath.Glob(filepath.Join(l.root, ".shellgate-quarantined-.vscode-*"))
	if _, err := os.Stat(filepath.Join(l.root, ".vscode")); err == nil || len(aside) != 1 {
		t.Fatalf(".vscode still there (%v), moved aside to %v", err, aside)
	}
	run(t, s, l.root, "echo x > .shellgate-quarantined-.vscode-*/x; mv .shellgate-quarantined-.vscode-* .vscode")
	if _, err := os.Stat(filepath.Join(aside[0], "x")); err == nil {
		t.Error("what was moved aside is writable")
	}
	if _, err := os.Stat(filepath.Join(l.root, ".vscode")); err == nil {
		t.Error("what was moved aside was moved back")
	}
}

// What git init makes at a root that had no .git (its config, hooks, info)
// is moved to the quarantine, whatever it holds: no judging of keys or hooks,
// and git still works without them.
func TestQuarantineGit(t *testing.T) {
	lane.Live(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	for _, c := range []struct{ name, command string }{
		{"git init", "git init -q"},
		{"a hook", `git init -q && python3 -c 'open(".git/hooks/pre-commit", "w").write("#!/bin/sh\necho pwned\n")'`},
		{"fsmonitor", `git init -q && git config core.fsmonitor "touch $HOME/PWNED"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLab(t)
			must(t, os.RemoveAll(filepath.Join(l.root, ".git")))
			spec := quarantineSpec(l)
			s := start(t, spec)
			cmd, out := launch(t, s, l.root, c.command)
			cmd.Wait()
			o := out()
			got, _ := filepath.Glob(filepath.Join(spec.Quarantine, "[0-9]*", ".git", "*"))
			var names []string
			for _, g := range got {
				names = append(names, filepath.Base(g))
			}
			slices.Sort(names)
			names = slices.DeleteFunc(names, func(n string) bool { return n == "info" }) // where the templates have one
			if !slices.Equal(names, []string{"config", "hooks"}) {
				t.Errorf("quarantined %v (%s)", got, o)
			}
			if b, _ := os.ReadFile(filepath.Join(l.root, ".git/config")); strings.Contains(string(b), "fsmonitor") {
				t.Error("fsmonitor stayed in .git/config")
			}
			if b, _ := os.ReadFile(filepath.Join(l.root, ".git/hooks/pre-commit")); len(b) > 0 {
				t.Error("the hook stayed in .git/hooks")
			}
			if out, code := run(t, s, l.root, "echo a > a && git add a && git -c user.name=a -c user.email=a@b commit -qm x && git log --format=%s"); code != 0 || out != "x\n" {
				t.Errorf("git after the move: %d %q", code, out)
			}
		})
	}
}

// A .git/config that appears in a .git pinned since the session started (its
// hooks were protected) is quarantined too: moved aside within .git, which a
// rename cannot leave.
func TestQuarantinePinnedGit(t *testing.T) {
	l := newLab(t)
	must(t, os.Remove(filepath.Join(l.root, ".git/config")))
	spec := quarantineSpec(l)
	s := start(t, spec)
	if out, code := run(t, s, l.root, `printf '[core]\n\tfsmonitor = touch PWNED\n' > .git/config && ln .git/config .git/keep`); code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	if out, code := run(t, s, l.root, `echo changed > .git/keep`); code != 0 { // a second name, to a copy no more
		t.Fatalf("exit %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(l.root, ".git/config")); err == nil {
		t.Error(".git/config stayed")
	}
	got, _ := filepath.Glob(filepath.Join(l.root, ".git", ".shellgate-quarantined-config-*")) // beside itself: .git is pinned
	if len(got) != 1 {
		t.Fatalf("quarantined %v", got)
	}
	if b, _ := os.ReadFile(got[0]); !strings.Contains(string(b), "fsmonitor") {
		t.Errorf("the quarantined config: %q", b)
	}
}

// quarantineSpec is the lab's spec with the quarantine as shellgate sets it.
func quarantineSpec(l *lab) Spec {
	spec := l.spec()
	spec.Protected = append(spec.Protected, filepath.Join(l.root, ".claude"), filepath.Join(l.root, ".git/commondir"), filepath.Join(l.root, ".git/config.worktree"), filepath.Join(l.root, ".git/info"))
	spec.Quarantine = filepath.Join(l.root, ".shellgate-quarantine")
	return spec
}

// KeepReadOnly makes what it names read-only from the next command on; what
// it cannot, the command is told, with why, rather than left writable in
// silence.
func TestKeepReadOnlyTellsWhatItCouldNot(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	s := start(t, l.spec())
	kept := filepath.Join(l.root, "sub", "config")
	must(t, os.MkdirAll(filepath.Dir(kept), 0o755))
	must(t, os.WriteFile(kept, []byte("[core]\n"), 0o644))
	unkeepable := filepath.Join(l.root, strings.Repeat("x", 300)) // ENAMETOOLONG
	s.KeepReadOnly([]string{kept, unkeepable})
	launched, out := launch(t, s, l.root, "{ echo '[alias]' >> sub/config; } 2>/dev/null || echo refused")
	if code, _ := launched.Wait(); code == nil || *code != 0 || out() != "refused\n" {
		t.Errorf("the kept file was written: %v %q", code, out())
	}
	notes := strings.Join(launched.(interface{ Notes() []string }).Notes(), "\n")
	if !strings.Contains(notes, "could not make these read-only") || !strings.Contains(notes, "file name too long") || strings.Contains(notes, "sub/config") {
		t.Errorf("notes = %q", notes)
	}
}

// The guard does not wait for a call's end that will not come: what a job
// makes after its call returned is moved aside while the job runs on, and
// the next command is told. A command still in flight keeps what it makes
// until it ends.
func TestGuardActsWhileJobsRun(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	must(t, os.RemoveAll(filepath.Join(l.root, ".vscode")))
	spec := quarantineSpec(l)
	s := start(t, spec)
	// .vscode appears whole (a rename): a look between a mkdir and the
	// write into it would move it aside empty.
	job, _ := launch(t, s, l.root, "sleep 0.5; mkdir .v; echo '{}' > .v/tasks.json; mv .v .vscode; sleep 30")
	s.Detach(job.PID())
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		moved, _ := filepath.Glob(filepath.Join(spec.Quarantine, "[0-9]*", ".vscode", "tasks.json"))
		if len(moved) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a job's .vscode was not moved aside while the job ran")
		}
	}
	if _, err := os.Stat(filepath.Join(l.root, ".vscode")); !os.IsNotExist(err) {
		t.Errorf(".vscode is still in the root: %v", err)
	}
	next, _ := launch(t, s, l.root, "true")
	next.Wait()
	if notes := strings.Join(next.(interface{ Notes() []string }).Notes(), "\n"); !strings.Contains(notes, ".vscode") {
		t.Errorf("the next command was not told: %q", notes)
	}
	// The job's end moves what appeared meanwhile, as a command's end does:
	// it must be over before the command below makes its .vscode.
	s.KillTree(job.PID(), syscall.SIGKILL)
	job.Wait()

	// A command in flight: its .vscode stays until it ends.
	cmd, out := launch(t, s, l.root, "mkdir .vscode && sleep 1 && test -d .vscode && echo kept")
	if code, _ := cmd.Wait(); code == nil || *code != 0 || out() != "kept\n" {
		t.Errorf("a command's own .vscode was moved while it ran: %v %q", code, out())
	}

	// Once the session is empty the guard stops; the next command starts it
	// again, and its job is guarded as the first one was.
	must(t, os.RemoveAll(filepath.Join(l.root, ".vscode")))
	waitEmpty(t, s)
	time.Sleep(3 * helper.GuardEvery) // the guard has seen the session empty
	job, _ = launch(t, s, l.root, "sleep 0.5; mkdir .v; echo '{}' > .v/settings.json; mv .v .vscode; sleep 30")
	s.Detach(job.PID())
	defer s.KillTree(job.PID(), syscall.SIGKILL)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if moved, _ := filepath.Glob(filepath.Join(spec.Quarantine, "[0-9]*", ".vscode", "settings.json")); len(moved) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a job started after the session was empty was not guarded")
		}
	}
}

// What a process of the session makes again after the guard moved it aside
// is not moved a second time only: a job re-making .vscode (or
// .git/info) as soon as it is moved would keep it there almost all the
// time, for the user's editor or git on the host. The guard ends every
// process of the session then, and the next call is told (TakeNotes,
// TakeStopped). While a command runs, what git obeys in a .git the session
// started with (.git/info) is moved at once, and its making again ends the
// command; the command's other protected entries wait for its end
// (.git/commondir and .git/config.worktree are never made:
// TestJudgeGitRedirects).
func TestGuardStopsWhatMakesItAgain(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	must(t, os.RemoveAll(filepath.Join(l.root, ".vscode")))
	spec := quarantineSpec(l)
	s := start(t, spec)
	stopped := make(chan []string, 4)
	s.OnStopped(func(paths []string) { stopped <- paths })
	stoppedFor := func() []string {
		select {
		case p := <-stopped:
			return p
		case <-time.After(5 * time.Second):
			return nil
		}
	}

	// A job re-making .vscode: ended by the guard's second move.
	job, _ := launch(t, s, l.root, "while :; do mkdir -p .v && echo '{}' > .v/tasks.json && mv -T .v .vscode 2>/dev/null; sleep 0.001; done")
	s.Detach(job.PID())
	done := make(chan string, 1)
	go func() { _, sig := job.Wait(); done <- sig }()
	select {
	case sig := <-done:
		if sig != "SIGKILL" {
			t.Errorf("the job ended by %q", sig)
		}
	case <-time.After(10 * time.Second):
		s.KillTree(job.PID(), syscall.SIGKILL)
		t.Fatal("a job re-making .vscode after each move was not stopped")
	}
	if got := stoppedFor(); !slices.Equal(got, []string{filepath.Join(l.root, ".vscode")}) {
		t.Errorf("OnStopped: %q", got)
	}
	if notes := strings.Join(s.TakeNotes(), "\n"); !strings.Contains(notes, "Stopped: a process of this session made .vscode again") {
		t.Errorf("notes = %q", notes)
	}
	time.Sleep(2 * helper.GuardEvery)
	if exists(filepath.Join(l.root, ".vscode")) {
		t.Error(".vscode is in the root")
	}

	// Made again a model's turn later (a terminal job's `git init`, then
	// `git config …`): moved again, nothing stopped.
	time.Sleep(2500 * time.Millisecond) // past the loop's last move
	before, _ := filepath.Glob(filepath.Join(spec.Quarantine, "[0-9]*", ".vscode"))
	slow, _ := launch(t, s, l.root, "mkdir .vscode; sleep 2.5; mkdir .vscode; sleep 30")
	s.Detach(slow.PID())
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if moved, _ := filepath.Glob(filepath.Join(spec.Quarantine, "[0-9]*", ".vscode")); len(moved) >= len(before)+2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow job's .vscode was not moved twice")
		}
	}
	time.Sleep(2 * helper.GuardEvery)
	select {
	case p := <-stopped:
		t.Errorf("stopped for %q made again 2.5 s after its move", p)
	default:
	}
	if pids, _ := s.Processes(); len(pids) == 0 {
		t.Error("the slow job was stopped")
	}
	s.KillTree(slow.PID(), syscall.SIGKILL)
	slow.Wait()

	// A command in flight: .git/commondir and .git/config.worktree are
	// never made (git makes neither in a repository's own directory); its
	// .git/info is moved while it runs, not at its end; made once, the
	// command goes on.
	cmd, out := launch(t, s, l.root, "echo ../x 2>/dev/null > .git/commondir || echo refused; echo 2>/dev/null > .git/config.worktree || echo refused; mkdir .git/info; sleep 1; test -e .git/info && echo there; echo end")
	if code, sig := cmd.Wait(); code == nil || !strings.HasSuffix(out(), "refused\nrefused\nend\n") {
		t.Errorf("a command's .git/commondir, config.worktree and info: %v %s %q", code, sig, out())
	}
	// Made again and again: the command is ended.
	start := time.Now()
	cmd, out = launch(t, s, l.root, "while :; do mkdir .git/info 2>/dev/null; sleep 0.001; done")
	if _, sig := cmd.Wait(); sig != "SIGKILL" || time.Since(start) > 5*time.Second {
		t.Errorf("a command re-making .git/info: %s after %v, %q", sig, time.Since(start), out())
	}
	if got := stoppedFor(); !slices.Equal(got, []string{filepath.Join(l.root, ".git/info")}) {
		t.Errorf("OnStopped: %q", got)
	}
	// The command's own envelope tells, not the next call's again.
	if notes := strings.Join(cmd.(interface{ Notes() []string }).Notes(), "\n"); !strings.Contains(notes, "Stopped: a process of this session made .git/info again") {
		t.Errorf("the command's notes = %q", notes)
	}
	if notes := s.TakeNotes(); len(notes) > 0 {
		t.Errorf("told again: %q", notes)
	}
	time.Sleep(2 * helper.GuardEvery)
	for _, p := range []string{".git/commondir", ".git/config.worktree", ".git/info"} {
		if exists(filepath.Join(l.root, p)) {
			t.Errorf("%s is in the root", p)
		}
	}
	// The session goes on.
	if got, _ := run(t, s, l.root, "echo ok"); got != "ok\n" {
		t.Errorf("after the stop: %q", got)
	}
}

// waitEmpty waits until the session has no process besides its helper.
func waitEmpty(t testing.TB, s *Session) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if pids, ok := s.Processes(); ok && len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the session's processes did not end")
		}
	}
}

// A command that ends with nothing else of the session left leaves the
// session idle (message.Idle): Close then kills the helper without asking it
// to end the session first. Only until the next request: a later command
// that runs on and writes a protected path is ended, and what it wrote moved
// aside, by the helper's own end as before; a command that leaves a job
// behind leaves the session not idle. A one-shot session's helper
// (Spec.OneShot) ends itself once idle.
func TestCloseAfterIdle(t *testing.T) {
	lane.Live(t)
	idle := func(s *Session) (uint64, uint64) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.idle, s.nextID
	}
	t.Run("alone", func(t *testing.T) {
		l := newLab(t)
		s := start(t, quarantineSpec(l))
		run(t, s, l.root, "true")
		if got, last := idle(s); got != last {
			t.Errorf("after a command that ended alone: idle %d, last request %d", got, last)
		}
		must(t, s.Close())
		if s.Alive() {
			t.Error("the helper outlived Close")
		}
	})
	t.Run("job left", func(t *testing.T) {
		l := newLab(t)
		s := start(t, quarantineSpec(l))
		run(t, s, l.root, "sleep 6006.5"+runTag+" >/dev/null 2>&1 &")
		if got, _ := idle(s); got != 0 {
			t.Errorf("a job runs on, yet the session was said idle after request %d", got)
		}
		must(t, s.Close())
		if left := procsNamed("6006.5" + runTag); len(left) > 0 {
			t.Errorf("survived Close: %v", left)
		}
	})
	// A one-shot session's helper ends itself once its command's end
	// leaves it idle, and stays while a job the command left runs.
	oneShot := func(t *testing.T, command string) *Session {
		l := newLab(t)
		spec := quarantineSpec(l)
		spec.OneShot = true
		s := start(t, spec)
		run(t, s, l.root, command)
		return s
	}
	t.Run("one shot", func(t *testing.T) {
		s := oneShot(t, "true")
		waitFor(t, "the helper's end", func() bool { return !s.Alive() })
		must(t, s.Close())
	})
	t.Run("one shot, job left", func(t *testing.T) {
		s := oneShot(t, "sleep 6008.5"+runTag+" >/dev/null 2>&1 &")
		time.Sleep(100 * time.Millisecond)
		if !s.Alive() {
			t.Error("the helper ended while a job of its session ran")
		}
		must(t, s.Close())
		if left := procsNamed("6008.5" + runTag); len(left) > 0 {
			t.Errorf("survived Close: %v", left)
		}
	})
	t.Run("command since", func(t *testing.T) {
		l := newLab(t)
		must(t, os.RemoveAll(filepath.Join(l.root, ".vscode")))
		s := start(t, quarantineSpec(l))
		run(t, s, l.root, "true")
		launch(t, s, l.root, `mkdir .vscode && echo '{"evil": 1}' > .vscode/tasks.json && exec sleep 6007.5`+runTag)
		waitFor(t, "the command's write", func() bool { return len(procsNamed("6007.5"+runTag)) == 1 })
		if got, last := idle(s); got == last {
			t.Fatalf("a command runs, yet the session is taken for idle (request %d)", got)
		}
		must(t, s.Close())
		if left := procsNamed("6007.5" + runTag); len(left) > 0 {
			t.Errorf("survived Close: %v", left)
		}
		if exists(filepath.Join(l.root, ".vscode/tasks.json")) {
			t.Error("the running command's .vscode stayed in the root")
		}
	})
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
