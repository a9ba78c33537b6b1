package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The tool caches a session may write: Go's where the commands' environment
// puts them (created, as go would), else under the home; a relative one is
// no cache; the others under the home.
func TestCacheDirs(t *testing.T) {
	lab := t.TempDir()
	home := filepath.Join(lab, "home")
	for _, c := range []struct {
		name      string
		env       map[string]string
		home      string
		goDirs    []string // the Go caches, first
		wantOther bool     // .npm and the rest follow
	}{
		{name: "defaults", home: home, goDirs: []string{filepath.Join(home, ".cache", "go-build"), filepath.Join(home, "go", "pkg", "mod")}, wantOther: true},
		{name: "GOCACHE and GOMODCACHE", home: home,
			env:    map[string]string{"GOCACHE": filepath.Join(lab, "gc"), "GOMODCACHE": filepath.Join(lab, "mod")},
			goDirs: []string{filepath.Join(lab, "gc"), filepath.Join(lab, "mod")}, wantOther: true},
		{name: "XDG_CACHE_HOME and GOPATH", home: home,
			env:    map[string]string{"XDG_CACHE_HOME": filepath.Join(lab, "xdg"), "GOPATH": filepath.Join(lab, "gp") + string(filepath.ListSeparator) + filepath.Join(lab, "gp2")},
			goDirs: []string{filepath.Join(lab, "xdg", "go-build"), filepath.Join(lab, "gp", "pkg", "mod")}, wantOther: true},
		{name: "a relative GOCACHE is none", home: home, env: map[string]string{"GOCACHE": "rel"},
			goDirs: []string{filepath.Join(home, "go", "pkg", "mod")}, wantOther: true},
		{name: "no home", env: map[string]string{"GOCACHE": filepath.Join(lab, "gc2")}, goDirs: []string{filepath.Join(lab, "gc2")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := CacheDirs(c.home, func(k string) string { return c.env[k] })
			if len(got) < len(c.goDirs) || !slices.Equal(got[:len(c.goDirs)], c.goDirs) {
				t.Fatalf("CacheDirs = %q, want the Go caches %q first", got, c.goDirs)
			}
			for _, d := range c.goDirs {
				if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
					t.Errorf("Go cache %s not created: %v", d, err)
				}
			}
			rest := got[len(c.goDirs):]
			if c.wantOther != slices.Contains(rest, filepath.Join(c.home, ".npm")) || !c.wantOther && len(rest) > 0 {
				t.Errorf("the other caches: %q (want them: %v)", rest, c.wantOther)
			}
		})
	}
}

// A project in /tmp gets a temp dir of its own there: the policy lets
// commands write the temp dir, not the root's parents.
func TestSessionTemp(t *testing.T) {
	for root, want := range map[string]string{"/work/p": "/tmp", "/tmp": "/tmp/shellgate-tmp", "/tmp/p": "/tmp/shellgate-tmp", "/tmpx/p": "/tmp"} {
		if got := SessionTemp(root); got != want {
			t.Errorf("SessionTemp(%s) = %s, want %s", root, got, want)
		}
	}
}
