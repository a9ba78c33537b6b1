package shellgate

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// The tool caches are where the commands' environment puts them: a variable
// that moves one moves its copy-on-write overlay, and one set to the home (or
// above it) shows no cache rather than the whole home.
func TestCacheDirsFollowTheEnvironment(t *testing.T) {
	unset := map[string]string{"XDG_CACHE_HOME": "", "XDG_DATA_HOME": "", "GOPATH": ""}
	for _, c := range toolCaches {
		for _, e := range c.env {
			name, _, _ := strings.Cut(e, "/")
			unset[name] = ""
		}
	}
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
		{"the home is no cache", map[string]string{"npm_config_cache": "/home/u", "PIP_CACHE_DIR": "/home", "YARN_CACHE_FOLDER": "/", "GOMODCACHE": "/home/u/"}, nil, []string{"/home/u", "/home", "/", "/home/u/"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir() // the Go caches are made if missing
			env := maps.Clone(unset)
			env["GOCACHE"], env["GOMODCACHE"] = tmp+"/go-build", tmp+"/mod"
			if _, ok := c.env["XDG_CACHE_HOME"]; ok {
				env["GOCACHE"] = ""
			}
			for k, v := range c.env {
				env[k] = strings.ReplaceAll(v, "$T", tmp)
			}
			g := &Gate{cfg: Config{Env: env}}
			got := g.cacheDirs("/home/u")
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
