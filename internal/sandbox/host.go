package sandbox

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// QuarantineDir is where the sandbox moves protected paths that commands
// create, in the root.
const QuarantineDir = ".shellgate-quarantine"

// Here reports whether this package has a session for this system: Linux;
// macOS where sandbox-exec is; Windows (a job object, no more).
func Here() bool {
	switch runtime.GOOS {
	case "linux", "windows":
		return true
	case "darwin":
		_, err := os.Stat(SandboxExec)
		return err == nil
	}
	return false
}

// SessionTemp is the commands' TMPDIR in a Linux session: its own /tmp, or a
// directory in it when the project itself lies in /tmp, so that the policy,
// which lets commands write in the temp dir, still keeps them out of the
// root's parents.
func SessionTemp(root string) string {
	if root == "/tmp" || strings.HasPrefix(root, "/tmp/") {
		return "/tmp/shellgate-tmp"
	}
	return "/tmp"
}

// CacheDirs are the tool caches ordinary builds write to, for Spec.Caches:
// Go's where getenv (the commands' environment) puts them, then the others
// under home. The Go caches are created if missing, as go itself would.
func CacheDirs(home string, getenv func(string) string) []string {
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
		if d != "" && filepath.IsAbs(d) && os.MkdirAll(d, 0o755) == nil {
			dirs = append(dirs, d)
		}
	}
	if home == "" {
		return dirs
	}
	for _, rel := range []string{".npm", ".cache/pip", ".cache/yarn", ".cache/pnpm", ".local/share/pnpm",
		".cargo/registry", ".cargo/git", ".m2/repository", ".gradle/caches", ".cache/node-gyp",
		".bun/install/cache", ".cache/deno", ".cache/uv", ".cache/pypoetry"} {
		dirs = append(dirs, filepath.Join(home, rel))
	}
	return dirs
}
