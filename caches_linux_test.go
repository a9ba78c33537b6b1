package shellgate_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/cachestore"
	"github.com/shellgate/shellgate/internal/lane"
)

// A project's copies of the tool caches are kept in shellgate's state under
// the project's name, and go when the project does: a later Gate's start
// removes them, so the store does not grow with every directory shellgate
// ever ran in.
func TestCacheCopiesGoWithTheirProject(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	store := filepath.Join(os.Getenv("XDG_STATE_HOME"), "shellgate", "caches") // TestMain's
	gone := newLab(t)
	g := gate(t, shellgate.Config{Root: gone.root})
	// As a build writes its cache (the policy names no path).
	env := run(t, g, shellgate.Request{Command: `python3 -c 'import os; p = os.path.expanduser("~/.npm/shellgate-test"); os.makedirs(os.path.dirname(p), exist_ok=True); open(p, "w").write("warm\n")' && cat ~/.npm/shellgate-test`})
	if env.Text == "" || env.Data.Stdout != "warm\n" {
		t.Fatalf("a write to npm's cache: %s", env.Text)
	}
	dir := cachestore.DirFor(store, gone.root)
	if b, err := os.ReadFile(filepath.Join(dir, "root")); err != nil || string(b) != gone.root+"\n" {
		t.Fatalf("the project's copies are not named after it: %q %v", b, err)
	}
	if home, _ := os.UserHomeDir(); exists(filepath.Join(home, ".npm", "shellgate-test")) {
		t.Error("the host's cache was written")
	}
	must(t, g.Close())
	must(t, os.RemoveAll(gone.root))

	// A day later, another project's first command.
	day := time.Now().Add(-cachestore.SweepEvery - time.Minute)
	must(t, os.Chtimes(filepath.Join(store, cachestore.StampFile), day, day))
	other := newLab(t)
	// The sweep runs beside the first session; Close stops it.
	og := gate(t, shellgate.Config{Root: other.root})
	run(t, og, shellgate.Request{Command: "true"})
	for deadline := time.Now().Add(100 * time.Second); exists(dir) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if exists(dir) {
		t.Errorf("the removed project's copies are still kept: %s", dir)
	}
	if !exists(cachestore.DirFor(store, other.root)) {
		t.Error("the project in use has no copies")
	}
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// A cache variable that points into a secret directory, or at one that holds
// a secret, does not bring the secret into the view: not a secret there when
// the session starts (~/.password-store/work), nor one the user makes on the
// host while it runs (a docker login writing ~/.docker/config.json).
func TestCacheVariablesShowNoSecret(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	base := visibleTempDir(t)
	root, home := filepath.Join(base, "root"), filepath.Join(base, "home")
	for _, d := range []string{root, home + "/.password-store/work", home + "/.docker"} {
		must(t, os.MkdirAll(d, 0o700))
	}
	must(t, os.WriteFile(home+"/.password-store/work/db.gpg", []byte("PASS-MARKER\n"), 0o600))
	g := gate(t, shellgate.Config{Root: root, Env: map[string]string{
		"HOME":             home,
		"PIP_CACHE_DIR":    home + "/.password-store/work",
		"npm_config_cache": home + "/.docker",
	}})
	refused := strings.Join(g.RefusedCaches(), "\n")
	for _, d := range []string{home + "/.password-store/work: lies in the secret", home + "/.docker: holds the secret"} {
		if !strings.Contains(refused, d) {
			t.Errorf("doctor --plan's refused caches lack %q:\n%s", d, refused)
		}
	}
	env := run(t, g, shellgate.Request{Command: "cat ~/.password-store/work/db.gpg"})
	if strings.Contains(env.Text, "PASS-MARKER") {
		t.Errorf("a secret in a cache variable's directory was read:\n%s", env.Text)
	}
	must(t, os.WriteFile(home+"/.docker/config.json", []byte("DOCKER-MARKER\n"), 0o600))
	env = run(t, g, shellgate.Request{Command: "cat ~/.docker/config.json"})
	if strings.Contains(env.Text, "DOCKER-MARKER") {
		t.Errorf("a secret made on the host while the session ran was read through a cache variable:\n%s", env.Text)
	}
}

// A session makes nothing in the user's home for caches the user has not
// got: Go's caches missing on the host are the project's own in the view,
// where a build writes them, and stay missing on the host, as does the plan
// `doctor --plan` shows.
func TestMissingCachesStayMissing(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	base := visibleTempDir(t)
	root, home := filepath.Join(base, "root"), filepath.Join(base, "home")
	for _, d := range []string{root, home} {
		must(t, os.MkdirAll(d, 0o755))
	}
	g := gate(t, shellgate.Config{Root: root, Env: map[string]string{"HOME": home}})
	g.SandboxPlan()
	// As a build writes its caches (the policy names no path).
	env := run(t, g, shellgate.Request{Command: `python3 -c 'import os; h = os.path.expanduser("~"); os.makedirs(h + "/go/pkg/mod/cache", exist_ok=True); os.makedirs(h + "/.cache/go-build", exist_ok=True); open(h + "/.cache/go-build/x", "w").write("warm\n")' && cat ~/.cache/go-build/x`})
	if env.Data.Stdout != "warm\n" {
		t.Fatalf("a build's write to Go's caches: %s", env.Text)
	}
	must(t, g.Close())
	for _, d := range []string{home + "/go", home + "/.cache"} {
		if exists(d) {
			t.Errorf("%s was made on the host", d)
		}
	}
}

// Two live sessions of one project (two MCP servers in the same root, or a
// `shellgate run` beside one) each write to the tool caches while the other
// runs: both commands succeed and read back what they wrote, the host's
// cache stays as it was, and once both have ended a later session finds the
// project's copy whole (the first session's writes there, no work dir of a
// mount left behind). The sessions shared one overlay layer before: the
// second's mount took away the work dir the first's overlay still used, and
// the first's next copy-up failed.
func TestTwoSessionsOfAProjectShareNoCacheLayer(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	store := filepath.Join(os.Getenv("XDG_STATE_HOME"), "shellgate", "caches") // TestMain's
	base := visibleTempDir(t)
	root, home := filepath.Join(base, "root"), filepath.Join(base, "home")
	hostCache := home + "/.npm/_cacache"
	must(t, os.MkdirAll(root, 0o755))
	names := []string{"one", "two", "three"}
	for _, n := range names {
		must(t, os.MkdirAll(hostCache+"/"+n, 0o755))
		must(t, os.WriteFile(hostCache+"/"+n+"/host", []byte("host\n"), 0o644))
	}
	cfg := shellgate.Config{Root: root, Env: map[string]string{"HOME": home}}
	// A write that copies directories of the host's cache up into the
	// session's layer, through the overlay's work dir.
	write := func(g *shellgate.Gate, name string) {
		t.Helper()
		// (By python, as a build would: the policy names no path.)
		cmd := `python3 -c 'import os, sys; n = sys.argv[1]; d = os.path.expanduser("~/.npm/_cacache/" + n); os.makedirs(d + "/entry"); open(d + "/entry/" + n, "w").write(n + "\n"); open(d + "/host", "a").write(n + "\n")' ` + name + ` && cat ~/.npm/_cacache/` + name + `/entry/` + name + ` ~/.npm/_cacache/` + name + `/host`
		env := run(t, g, shellgate.Request{Command: cmd})
		if env.Data.Stdout != name+"\nhost\n"+name+"\n" || env.Data.ExitCode == nil || *env.Data.ExitCode != 0 {
			t.Errorf("%s's write to npm's cache: %s", name, env.Text)
		}
	}
	first := gate(t, cfg)
	write(first, "one")
	second := gate(t, cfg)
	write(second, "two")
	must(t, second.Close()) // its set-up's leftovers removed
	write(first, "three")   // a copy-up after the second session's mount
	env := run(t, first, shellgate.Request{Command: "cat ~/.npm/_cacache/one/entry/one ~/.npm/_cacache/three/entry/three"})
	if env.Data.Stdout != "one\nthree\n" {
		t.Errorf("the first session's writes, read back after the second's:\n%s", env.Text)
	}
	must(t, first.Close())

	for _, n := range names {
		b, err := os.ReadFile(hostCache + "/" + n + "/host")
		if entries, _ := os.ReadDir(hostCache + "/" + n); err != nil || string(b) != "host\n" || len(entries) != 1 {
			t.Errorf("the host's cache was written: %q %v %v", b, err, entries)
		}
	}
	later := gate(t, cfg)
	env = run(t, later, shellgate.Request{Command: "cat ~/.npm/_cacache/one/host ~/.npm/_cacache/three/host"})
	if env.Data.Stdout != "host\none\nhost\nthree\n" {
		t.Errorf("a later session lacks the project's cache writes:\n%s", env.Text)
	}
	must(t, later.Close())
	// What the mounts leave in the project's directory: their layers' upper
	// and work dirs, no work dir set aside or marker left over.
	filepath.WalkDir(cachestore.DirFor(store, root), func(p string, d fs.DirEntry, err error) error {
		if err == nil && (d.Name() == "stale" || d.Name() == "incompat") {
			t.Errorf("left in the project's copies: %s", p)
		}
		return nil
	})
}
