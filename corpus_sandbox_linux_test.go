package shellgate_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/corpus"
	"github.com/shellgate/shellgate/internal/sandbox"
	"github.com/shellgate/shellgate/policy"
)

// secretEnv is shellgate's own environment in the corpus's secret rows.
var secretEnv = []string{"GH_PAT", "SLACK_WEBHOOK_URL", "SENTRY_DSN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "NPM_TOKEN",
	"AZURE_STORAGE_CONNECTION_STRING", "ConnectionStrings__Default", "SPRING_DATASOURCE_URL"}

// secretShape is where a variable whose name does not say it holds a
// credential holds it: a field of a connection string or of a URL's query.
var secretShape = map[string]string{
	"AZURE_STORAGE_CONNECTION_STRING": "DefaultEndpointsProtocol=https;AccountName=lab;AccountKey=%s",
	"ConnectionStrings__Default":      "Server=db;Database=app;User Id=sa;Password=%s;",
	"SPRING_DATASOURCE_URL":           "jdbc:postgresql://db:5432/app?user=app&password=%s",
}

// secretValue is variable name's value holding the fake secret.
func secretValue(name, fake string) string {
	if f, ok := secretShape[name]; ok {
		return fmt.Sprintf(f, fake)
	}
	return fake
}

// Every live row of the attack corpus, run with the default configuration — the
// policy and the sandbox together — does no harm, judged as the corpus README
// says: nothing outside the root changes, the loopback listener hears nothing,
// no fake secret reaches the output or the root, no protected file in the root
// changes, no process outlives the Gate, no printed directory lies outside.
func TestCorpusAttacksLiveHarmless(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every live row of the corpus")
	}
	requireSandbox(t)
	for _, name := range secretEnv {
		t.Setenv(name, secretValue(name, "value-"+corpus.FakeKey))
	}
	ran := 0
	for _, file := range []string{"attacks.tsv", "attacks-review.tsv"} {
		for _, r := range corpus.Read(t, file) {
			run := r.Fields["run"]
			if run != "live" && run != "live-guarded" && run != "live-reported" {
				continue
			}
			ran++
			t.Run(file+":"+r.Fields["category"], func(t *testing.T) {
				liveRow(t, r.Command(), run)
			})
		}
	}
	if ran < 100 {
		t.Fatalf("only %d live rows", ran)
	}
}

func liveRow(t *testing.T, command, run string) {
	guarded := run == "live-guarded"
	l := corpus.NewLab(t, visibleTempDir(t))
	tcp, udp, heard := listen(t)
	command = l.Substitute(command, tcp.Addr().(*net.TCPAddr).Port)
	if p := udp.LocalAddr().(*net.UDPAddr).Port; p != tcp.Addr().(*net.TCPAddr).Port {
		udp.Close() // the UDP listener must share the port; retry on another one
		t.Skip("could not get the same port for TCP and UDP")
	}
	outside := snapshot(t, l.Base, l.Root)
	protected := snapshotProtected(t, l.Root)
	tag := newTag()
	env := tag.env()
	env["HOME"] = l.Home
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if v := goEnv(k); v != "" {
			env[k] = v // a warm build cache: the go rows compile in seconds
		}
	}
	cfg := shellgate.Config{Root: l.Root, SpillDir: t.TempDir(), KillGrace: 300 * time.Millisecond, Env: env}
	timeout := int64(20000)
	if guarded {
		cfg.Sandbox.Limits = sandbox.Limits{Procs: 256, FileSize: 64 << 20}
		timeout = 2000
	}
	g, err := shellgate.New(cfg)
	must(t, err)
	res := runOne(t, g, shellgate.Request{Command: command, TimeoutMS: &timeout})
	must(t, g.Close())
	if run == "live-reported" {
		// Refused, or run and told.
		if res.Data.ExitCode != nil && !strings.Contains(res.Text, "New git repository in the project:") {
			t.Errorf("the repository that appeared was not told\ncommand: %s\n%s", command, res.Text)
		}
	} else {
		hostGitStatus(t, l)
	}

	judge := func(what string, harmed bool) {
		if harmed {
			t.Errorf("%s\ncommand: %s\ndecision: %s %s\n%s", what, command, res.Status, policyOf(res), res.Text)
		}
	}
	for path, was := range outside {
		if now := fileState(path); now != was {
			judge("changed outside the root: "+path, true)
		}
	}
	for path := range snapshot(t, l.Base, l.Root) {
		if _, ok := outside[path]; !ok && !isCacheNoise(l, path) {
			judge("new outside the root: "+path, true)
		}
	}
	for path, was := range protected {
		if fileState(path) != was {
			judge("protected file changed: "+path, true)
		}
	}
	judge("the listener heard something", heard.Load() > 0)
	out := res.Data.Stdout + res.Data.Stderr
	judge("a fake secret reached the output", strings.Contains(out, corpus.FakeKey))
	filepath.WalkDir(l.Root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !strings.Contains(p, "/.git/") {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), corpus.FakeKey) {
				judge("a fake secret was copied into the root: "+p, true)
			}
		}
		return nil
	})
	for _, line := range strings.Split(res.Data.Stdout, "\n") {
		if line != "" && strings.HasPrefix(l.Root, line+"/") {
			judge("printed a directory outside the root: "+line, true)
		}
	}
	for pid, cmd := range tagged(tag.String()) {
		judge("survived the gate: "+cmd, pid > 0)
	}
}

// hostGitStatus runs `git status` on the host, as the user will after the
// agent's session, in the root and in each directory of it that holds a
// repository (a .git, or a HEAD: a bare one) — where the user may go and run
// git: what a command planted for git to run outside the sandbox (an
// fsmonitor, in the root's config or a nested repository's) then does its
// harm, for the judge to see.
func hostGitStatus(t *testing.T, l *corpus.Lab) {
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	dirs := []string{l.Root}
	filepath.WalkDir(l.Root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil || !d.IsDir() || len(dirs) > 50:
			return nil
		case d.Name() == ".git" || d.Name() == ".shellgate-quarantine":
			return filepath.SkipDir
		}
		_, git := os.Lstat(filepath.Join(p, ".git"))
		_, head := os.Lstat(filepath.Join(p, "HEAD"))
		if p != l.Root && (git == nil || head == nil) {
			dirs = append(dirs, p)
		}
		return nil
	})
	for _, dir := range dirs {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, "git", "-C", dir, "status", "--short")
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+l.Home)
		cmd.Run()
		cancel()
	}
}

var runOne = run

func policyOf(e envelope.Envelope) string {
	if e.Context.Policy == nil {
		return ""
	}
	return e.Context.Policy.Decision + " " + e.Context.Policy.Rule
}

// listen starts the corpus's listener: TCP and UDP on one loopback port, counting
// what arrives.
func listen(t *testing.T) (net.Listener, net.PacketConn, *atomic.Int64) {
	var heard atomic.Int64
	for range 20 {
		tcp, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
		udp, err := net.ListenPacket("udp", tcp.Addr().String())
		if err != nil {
			tcp.Close()
			continue
		}
		ls := &listeners{got: func(network string, b []byte) {
			n := int64(len(b))
			if network == "udp" {
				n++ // an empty datagram was heard too
			}
			heard.Add(n)
		}}
		ls.stream("tcp", tcp)
		ls.packets("udp", udp)
		t.Cleanup(ls.stop)
		return tcp, udp, &heard
	}
	t.Fatal("no port free for both TCP and UDP")
	return nil, nil, nil
}

// listeners serve stream and packet sockets, passing got whatever arrives (a
// connection's bytes at its end, or after 5 s; each datagram); stop closes
// them and every connection, and waits for their goroutines.
type listeners struct {
	got func(network string, b []byte)
	wg  sync.WaitGroup
	mu  sync.Mutex
	all []io.Closer
}

func (s *listeners) add(c io.Closer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.all == nil {
		return false // stopped
	}
	s.all = append(s.all, c)
	return true
}

func (s *listeners) stream(network string, ln net.Listener) {
	s.mu.Lock()
	s.all = append(s.all, ln)
	s.mu.Unlock()
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !s.add(c) {
				c.Close()
				return
			}
			s.wg.Go(func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if b, _ := io.ReadAll(c); len(b) > 0 {
					s.got(network, b)
				}
			})
		}
	})
}

func (s *listeners) packets(network string, pc net.PacketConn) {
	s.mu.Lock()
	s.all = append(s.all, pc)
	s.mu.Unlock()
	s.wg.Go(func() {
		buf := make([]byte, 64<<10)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			s.got(network, buf[:n])
		}
	})
}

func (s *listeners) stop() {
	s.mu.Lock()
	all := s.all
	s.all = nil
	s.mu.Unlock()
	for _, c := range all {
		c.Close()
	}
	s.wg.Wait()
}

// snapshot records the state of every file under dir except those under skip.
func snapshot(t *testing.T, dir, skip string) map[string]string {
	t.Helper()
	states := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p == skip {
			return filepath.SkipDir
		}
		states[p] = fileState(p)
		return nil
	})
	return states
}

// snapshotProtected records the files the corpus counts as protected in the root.
func snapshotProtected(t *testing.T, root string) map[string]string {
	states := map[string]string{}
	for _, rel := range []string{".git/hooks", ".git/config", ".vscode", ".claude", ".envrc", ".shellgate.toml"} {
		p := filepath.Join(root, rel)
		states[p] = fileState(p)
		filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err == nil {
				states[q] = fileState(q)
			}
			return nil
		})
	}
	return states
}

// fileState is what a change to a file would change: kind, mode, owner, mtime, content.
func fileState(p string) string {
	fi, err := os.Lstat(p)
	if err != nil {
		return "absent"
	}
	st := fi.Mode().String() + " " + fi.ModTime().String()
	if fi.Mode().IsRegular() {
		b, _ := os.ReadFile(p)
		sum := sha256.Sum256(b)
		st += " " + string(sum[:])
	}
	return st
}

// isCacheNoise: tool caches in the fake home do not count (corpus README).
func isCacheNoise(l *corpus.Lab, p string) bool {
	for _, d := range []string{".cache", ".npm", "go", ".config/go", ".local"} {
		if under := filepath.Join(l.Home, d); p == under || strings.HasPrefix(p, under+"/") {
			return true
		}
	}
	return p == filepath.Join(l.Home, ".config")
}

// goEnv is a go environment variable of the machine's own, for a warm cache.
func goEnv(name string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	home, _ := os.UserHomeDir()
	switch name {
	case "GOCACHE":
		return filepath.Join(home, ".cache", "go-build")
	case "GOPATH":
		return filepath.Join(home, "go")
	}
	return ""
}

// visibleTempDir is a temporary directory outside /tmp: the sandbox gives each
// session a /tmp of its own, so a lab in the host's /tmp would be out of sight
// rather than out of reach, and would prove nothing about the sandbox.
func visibleTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("/var/tmp", "shellgate-test-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { removeAll(dir) })
	return dir
}

// removeAll removes dir, making each directory in it writable and readable
// first: a command may have taken the permissions away (chmod 000), which stops
// a user who is not root from removing what is in it.
func removeAll(dir string) error {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// Every row of the legitimate corpus that succeeds without the sandbox succeeds
// with it (network rows with the network on).
func TestCorpusLegitLiveInSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every legitimate row twice")
	}
	requireSandbox(t)
	for _, r := range corpus.Read(t, "legit.tsv") {
		t.Run(r.Fields["category"]+":"+r.Fields["command"], func(t *testing.T) {
			if r.Fields["category"] == "daemon" {
				t.Skip("a daemon's reads (docker ps) need its socket, which the sandbox shows only where the user forwards it")
			}
			outcome := func(mode sandbox.Mode) (envelope.Envelope, bool) {
				l := corpus.NewLab(t, visibleTempDir(t))
				env := map[string]string{"HOME": l.Home, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
				for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
					if v := goEnv(k); v != "" {
						env[k] = v
					}
				}
				pol := policy.Settings{Network: true}
				if mode == sandbox.Off {
					// Without a sandbox python3 -c … is asked about (no one
					// answers here): what is compared is how it runs.
					pol.Relax = []string{policy.RuleExecFlags}
				}
				g, err := shellgate.New(shellgate.Config{Root: l.Root, SpillDir: t.TempDir(), Env: env,
					Sandbox: shellgate.SandboxConfig{Mode: mode}, Policy: pol})
				must(t, err)
				defer g.Close()
				timeout := int64(60000)
				e := run(t, g, shellgate.Request{Command: l.Substitute(r.Command(), 1), TimeoutMS: &timeout})
				return e, e.Data.ExitCode != nil && *e.Data.ExitCode == 0
			}
			off, okOff := outcome(sandbox.Off)
			if !okOff {
				t.Skipf("fails without the sandbox too (a tool missing here?): %s", off.Text)
			}
			if on, okOn := outcome(sandbox.Auto); !okOn {
				t.Errorf("succeeds without the sandbox, fails in it:\n%s", on.Text)
			}
		})
	}
}

// requireSandbox skips, saying why, where the machine has no sandbox.
func requireSandbox(t *testing.T) {
	s, err := sandbox.Start(sandbox.Spec{})
	if err != nil {
		t.Skipf("no sandbox on this machine, so this is not run: %v", err)
	}
	s.Close()
}
