package home

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The tool caches a session may write: Go's where the commands' environment
// puts them, else under the home; a relative one is no cache; the others under
// the home. Nothing is made on the host: the view shows a missing cache as the
// project's own.
func TestCaches(t *testing.T) {
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
			got, _ := Caches(c.home, nil, func(k string) string { return c.env[k] })
			if len(got) < len(c.goDirs) || !slices.Equal(got[:len(c.goDirs)], c.goDirs) {
				t.Fatalf("CacheDirs = %q, want the Go caches %q first", got, c.goDirs)
			}
			for _, d := range c.goDirs {
				if _, err := os.Stat(d); !os.IsNotExist(err) {
					t.Errorf("Go cache %s made on the host: %v", d, err)
				}
			}
			if gc := GoCaches(c.home, func(k string) string { return c.env[k] }); !slices.Equal(gc, c.goDirs) {
				t.Errorf("GoCaches = %q, want %q", gc, c.goDirs)
			}
			rest := got[len(c.goDirs):]
			if c.wantOther != slices.Contains(rest, filepath.Join(c.home, ".npm")) || !c.wantOther && len(rest) > 0 {
				t.Errorf("the other caches: %q (want them: %v)", rest, c.wantOther)
			}
		})
	}
}

// The tool caches are where the commands' environment puts them: a variable
// that moves one moves its copy-on-write overlay, and one set to the home (or
// above it) shows no cache rather than the whole home.
func TestCachesFollowTheEnvironment(t *testing.T) {
	for _, c := range []struct {
		name      string
		env       map[string]string
		want, not []string
	}{
		{"defaults", nil, []string{"/home/u/.npm", "/home/u/.cache/pip", "/home/u/.cargo/registry"}, nil},
		{"npm moved", map[string]string{"npm_config_cache": "/srv/npm"}, []string{"/srv/npm"}, []string{"/home/u/.npm"}},
		{"XDG_CACHE_HOME", map[string]string{"XDG_CACHE_HOME": "$T/c"}, []string{"$T/c/pip", "$T/c/uv", "$T/c/go-build", "$T/c/deno"}, []string{"/home/u/.cache/pip"}},
		{"PIP_CACHE_DIR wins", map[string]string{"XDG_CACHE_HOME": "$T/c", "PIP_CACHE_DIR": "/p"}, []string{"/p"}, []string{"$T/c/pip"}},
		{"CARGO_HOME", map[string]string{"CARGO_HOME": "/opt/cargo"}, []string{"/opt/cargo/registry", "/opt/cargo/git"}, []string{"/home/u/.cargo/git"}},
		{"relative is ignored", map[string]string{"npm_config_cache": "cache"}, []string{"/home/u/.npm"}, []string{"cache"}},
		{"the home is no cache", map[string]string{"npm_config_cache": "/home/u", "PIP_CACHE_DIR": "/home", "YARN_CACHE_FOLDER": "/", "GOMODCACHE": "/home/u/"},
			nil, []string{"/home/u", "/home", "/", "/home/u/"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir() // the Go caches are made if missing
			env := map[string]string{"GOCACHE": tmp + "/go-build", "GOMODCACHE": tmp + "/mod"}
			if _, ok := c.env["XDG_CACHE_HOME"]; ok {
				env["GOCACHE"] = ""
			}
			for k, v := range c.env {
				env[k] = strings.ReplaceAll(v, "$T", tmp)
			}
			got, _ := Caches("/home/u", nil, func(k string) string { return env[k] })
			for _, w := range c.want {
				if w = strings.ReplaceAll(w, "$T", tmp); !slices.Contains(got, w) {
					t.Errorf("lacks %s: %v", w, got)
				}
			}
			for _, n := range c.not {
				if slices.Contains(got, strings.ReplaceAll(n, "$T", tmp)) {
					t.Errorf("has %s: %v", n, got)
				}
			}
		})
	}
}

// A variable that puts a cache in a secret, or around one, names no cache:
// its overlay would show the host's directory, what appears there later
// included; a Go cache there is not even made on the host. Symlinks are
// followed both ways; a look-alike name is no secret.
func TestCachesKeepOutOfSecrets(t *testing.T) {
	lab := t.TempDir()
	home := filepath.Join(lab, "home")
	for _, d := range []string{".ssh", ".config/gh", "keys"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(lab, "to-ssh")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, "keys"), filepath.Join(home, ".aws")); err != nil {
		t.Fatal(err)
	}
	secrets := []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".config/gh"), filepath.Join(home, ".aws")}
	for _, c := range []struct {
		name string
		env  map[string]string
		not  []string // $H: the home, $L: the lab
		want []string
	}{
		{"the secret itself", map[string]string{"npm_config_cache": "$H/.ssh"}, []string{"$H/.ssh"}, nil},
		{"inside a secret", map[string]string{"npm_config_cache": "$H/.ssh/x", "GOCACHE": "$H/.ssh/go-build"}, []string{"$H/.ssh/x", "$H/.ssh/go-build"}, nil},
		{"holding a secret", map[string]string{"npm_config_cache": "$H/.config", "XDG_CACHE_HOME": "$H/.config/gh"}, []string{"$H/.config", "$H/.config/gh/pip"}, nil},
		{"through a symlink to a secret", map[string]string{"YARN_CACHE_FOLDER": "$L/to-ssh/y"}, []string{"$L/to-ssh/y"}, nil},
		{"where a secret symlink leads", map[string]string{"PIP_CACHE_DIR": "$H/keys/pip"}, []string{"$H/keys/pip"}, nil},
		{"a look-alike", map[string]string{"npm_config_cache": "$H/.sshx", "GOCACHE": "$H/.config/ghx"}, nil, []string{"$H/.sshx", "$H/.config/ghx"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"GOMODCACHE": lab + "/mod"}
			expand := strings.NewReplacer("$H", home, "$L", lab).Replace
			for k, v := range c.env {
				env[k] = expand(v)
			}
			got, refused := Caches(home, secrets, func(k string) string { return env[k] })
			for _, n := range c.not {
				if n = expand(n); slices.Contains(got, n) {
					t.Errorf("has %s: %v", n, got)
				}
				if !slices.ContainsFunc(refused, func(r string) bool { return strings.HasPrefix(r, n+": ") && strings.Contains(r, " the secret ") }) {
					t.Errorf("%s is not said to be refused for a secret: %q", n, refused)
				}
			}
			for _, w := range c.want {
				if w = expand(w); !slices.Contains(got, w) {
					t.Errorf("lacks %s: %v", w, got)
				}
			}
			if _, err := os.Lstat(filepath.Join(home, ".ssh", "go-build")); err == nil {
				t.Error("a Go cache was made inside ~/.ssh on the host")
			}
		})
	}
}

// realPaths resolves as filepath.EvalSymlinks does, from its parents'
// results: through relative and absolute links, chains and links to links'
// parents, and not where a path, or what a link names, is missing or runs
// through a file.
func TestRealPathsAsEvalSymlinks(t *testing.T) {
	d := t.TempDir()
	for _, dir := range []string{"a/b/c", "x/y"} {
		if err := os.MkdirAll(filepath.Join(d, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(d, "a/file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"rel": "a/b", "abs": filepath.Join(d, "x"), "chain": "rel", "up": "../..", "dangling": "nowhere",
		"a/b/back": "../../x/y", "a/toFile": "file", "loop1": "loop2", "loop2": "loop1",
	} {
		if err := os.Symlink(target, filepath.Join(d, link)); err != nil {
			t.Fatal(err)
		}
	}
	r := realPaths{}
	for _, p := range []string{
		"", "a", "a/b/c", "rel", "rel/c", "abs/y", "chain/c", "chain/back", "chain/back/z", "up",
		"a/b/back", "dangling", "dangling/x", "a/toFile", "a/toFile/x", "a/file/x", "loop1", "missing/b",
		"rel/../a", "x/y/../y",
	} {
		p = filepath.Join(d, p)
		want, werr := filepath.EvalSymlinks(p)
		got, ok := r.eval(p)
		if ok != (werr == nil) || ok && got != want {
			t.Errorf("%s: %q %v, EvalSymlinks %q %v", p, got, ok, want, werr)
		}
	}
}
