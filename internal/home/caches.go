package home

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// toolCaches are the tool caches ordinary builds write to besides Go's: where
// each is by default (relative to the home) and the variables that move it,
// the first one set winning ("VAR/sub": in sub of the directory VAR names).
var toolCaches = []struct {
	home string
	env  []string
}{
	{".npm", []string{"npm_config_cache", "NPM_CONFIG_CACHE"}},
	{".cache/pip", []string{"PIP_CACHE_DIR", "XDG_CACHE_HOME/pip"}},
	{".cache/yarn", []string{"YARN_CACHE_FOLDER", "XDG_CACHE_HOME/yarn"}},
	{".cache/pnpm", []string{"XDG_CACHE_HOME/pnpm"}},
	{".local/share/pnpm", []string{"PNPM_HOME", "XDG_DATA_HOME/pnpm"}},
	{".cargo/registry", []string{"CARGO_HOME/registry"}},
	{".cargo/git", []string{"CARGO_HOME/git"}},
	{".m2/repository", nil},
	{".gradle/caches", []string{"GRADLE_USER_HOME/caches"}},
	{".cache/node-gyp", []string{"XDG_CACHE_HOME/node-gyp"}},
	{".bun/install/cache", []string{"BUN_INSTALL_CACHE_DIR"}},
	{".cache/deno", []string{"DENO_DIR", "XDG_CACHE_HOME/deno"}},
	{".cache/uv", []string{"UV_CACHE_DIR", "XDG_CACHE_HOME/uv"}},
	{".cache/pypoetry", []string{"POETRY_CACHE_DIR", "XDG_CACHE_HOME/pypoetry"}},
}

// Caches are the tool caches ordinary builds write to, for the sandbox (its Spec.Caches),
// where getenv (the commands' environment) puts them. The Go caches are
// created if missing, as go itself would. A variable that names the home (or
// a directory above it) names no cache: as one, the whole home would show,
// credentials included.
func Caches(home string, getenv func(string) string) []string {
	goCache := getenv("GOCACHE")
	if goCache == "" {
		if x := getenv("XDG_CACHE_HOME"); x != "" {
			goCache = filepath.Join(x, "go-build")
		} else if home != "" {
			goCache = filepath.Join(home, ".cache", "go-build")
		}
	}
	modCache := getenv("GOMODCACHE")
	if modCache == "" {
		if gp := filepath.SplitList(getenv("GOPATH")); len(gp) > 0 && gp[0] != "" {
			modCache = filepath.Join(gp[0], "pkg", "mod")
		} else if home != "" {
			modCache = filepath.Join(home, "go", "pkg", "mod")
		}
	}
	var dirs []string
	for _, d := range []string{goCache, modCache} {
		if d != "" && filepath.IsAbs(d) && !holdsHome(d, home) && os.MkdirAll(d, 0o755) == nil {
			dirs = append(dirs, d)
		}
	}
	for _, c := range toolCaches {
		dir := ""
		if home != "" {
			dir = filepath.Join(home, c.home)
		}
		for _, e := range c.env {
			name, sub, _ := strings.Cut(e, "/")
			if v := getenv(name); filepath.IsAbs(v) {
				dir = filepath.Join(v, sub)
				break
			}
		}
		if dir != "" && !slices.Contains(dirs, dir) && !holdsHome(dir, home) {
			dirs = append(dirs, dir)
		}
	}
	return dirs
}

// holdsHome reports whether dir is the home or a directory above it.
func holdsHome(dir, home string) bool {
	dir = filepath.Clean(dir)
	return dir == "/" || home != "" && (dir == home || strings.HasPrefix(home, dir+"/"))
}
