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
	{PythonCache, nil},
}

// PythonCache is where, relative to the home, the sandbox's commands keep
// Python's bytecode (their PYTHONPYCACHEPREFIX): no command writes a .pyc in
// the project, which the host's python would run in place of its source, so
// their caches are a tool cache of the project's own, which the host lacks
// and never reads, kept between sessions as the others.
const PythonCache = ".cache/shellgate-pycache"

// Caches are the tool caches ordinary builds write to, for the sandbox (its Spec.Caches),
// where getenv (the commands' environment) puts them, whether they exist or
// not: the view shows a missing one as the project's own, and nothing is made
// on the host (see GoCaches for a session without a view). A variable that names the home (or
// a directory above it) names no cache: as one, the whole home would show,
// credentials included. Nor does one that names a directory in a secret of
// secrets (absolute paths: ~/.ssh/x) or one holding a secret (~/.config
// holds ~/.config/gh): a cache shows the host's directory as it is, what
// appears there later included, where the view shows no secret (and where
// the sandbox has no mount namespace, a cache is writable in place).
// refused says which were refused, and why ("DIR: why").
func Caches(home string, secrets []string, getenv func(string) string) (dirs, refused []string) {
	// Each secret's real path once, not once per cache: resolving is an
	// lstat per component, and there are dozens of each.
	// Each directory's too: the secrets and caches share their parents (the
	// home, ~/.config), which EvalSymlinks resolved again for each.
	r := realPaths{}
	reals := make([][]string, len(secrets))
	for i, s := range secrets {
		reals[i] = r.withReal(filepath.Clean(s))
	}
	ok := func(dir string) bool {
		why := refusal(dir, home, secrets, reals, r)
		if why != "" && !slices.Contains(refused, dir+": "+why) {
			refused = append(refused, dir+": "+why)
		}
		return why == ""
	}
	for _, d := range GoCaches(home, getenv) {
		if ok(d) {
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
		if dir != "" && !slices.Contains(dirs, dir) && ok(dir) {
			dirs = append(dirs, dir)
		}
	}
	return dirs, refused
}

// GoCaches are Go's build and module caches where getenv puts them: the ones
// a session without a view, which writes to the host's caches in place, makes
// when missing, as go itself would, so that its Landlock rules can grant them.
func GoCaches(home string, getenv func(string) string) []string {
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
		if d != "" && filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// refusal says why dir may not be a cache: it holds the home, or holds or
// lies in one of secrets, as written or where symlinks lead (reals[i]:
// withReal of secrets[i]); "" when it may.
func refusal(dir, home string, secrets []string, reals [][]string, r realPaths) string {
	if holdsHome(dir, home) {
		return "holds the home"
	}
	dirs := r.withReal(filepath.Clean(dir))
	for i, s := range secrets {
		for _, real := range reals[i] {
			for _, d := range dirs {
				if within(d, real) {
					return "lies in the secret " + s
				}
				if within(real, d) {
					return "holds the secret " + s
				}
			}
		}
	}
	return ""
}

// withReal is p, and where symlinks lead when that differs (the nearest
// existing directory above a path that does not exist yet, resolved).
func (r realPaths) withReal(p string) []string {
	rest := ""
	for at := p; ; at = filepath.Dir(at) {
		if real, ok := r.eval(at); ok {
			if real = filepath.Join(real, rest); real != p {
				return []string{p, real}
			}
			return []string{p}
		}
		if at == filepath.Dir(at) {
			return []string{p}
		}
		rest = filepath.Join(filepath.Base(at), rest)
	}
}

// realPaths remembers what filepath.EvalSymlinks gave for each path (an
// absolute, clean one), resolving a path from its parent's result: one
// lstat for each directory however many paths lie beneath it.
type realPaths map[string]realPath

type realPath struct {
	real string
	ok   bool // it exists (the error EvalSymlinks would give otherwise)
}

// eval is filepath.EvalSymlinks(p), or false where that fails.
func (r realPaths) eval(p string) (string, bool) {
	if v, found := r[p]; found {
		return v.real, v.ok
	}
	var v realPath
	if parent := filepath.Dir(p); parent == p || !filepath.IsAbs(p) {
		real, err := filepath.EvalSymlinks(p)
		v = realPath{real, err == nil}
	} else if dir, ok := r.eval(parent); ok {
		at := filepath.Join(dir, filepath.Base(p))
		if fi, err := os.Lstat(at); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			real, err := filepath.EvalSymlinks(at)
			v = realPath{real, err == nil}
		} else {
			v = realPath{at, err == nil}
		}
	}
	r[p] = v
	return v.real, v.ok
}

// within reports whether path is dir or inside it.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// holdsHome reports whether dir is the home or a directory above it.
func holdsHome(dir, home string) bool {
	dir = filepath.Clean(dir)
	return dir == "/" || home != "" && (dir == home || strings.HasPrefix(home, dir+"/"))
}
