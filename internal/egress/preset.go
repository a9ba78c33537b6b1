package egress

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// PresetRegistries names the package registries of the toolchains on this
// machine, each read from the tool's own configuration (mirrors and private
// registries included).
const PresetRegistries = "registries"

// IsPreset reports whether an allow-list entry names a preset.
func IsPreset(entry string) bool { return strings.TrimSpace(entry) == PresetRegistries }

// Source is what one toolchain's registry configuration resolved to.
type Source struct {
	Tool  string   // "npm", "go", "pip", "cargo", "gem", "maven"
	Hosts []string // the hosts allowed for it
	From  string   // where they were read: a command, or "default"
	Note  string   // what it cannot cover (GOPROXY's direct), or why it failed
}

// Run runs a tool's command and returns its output; tests replace it.
type Run func(ctx context.Context, name string, args ...string) (string, error)

// Command runs name with args on the host, in the environment env (nil: the
// process's), for at most presetTimeout.
func Command(env []string) Run {
	return func(ctx context.Context, name string, args ...string) (string, error) {
		path, err := exec.LookPath(name)
		if err != nil {
			return "", err
		}
		ctx, cancel := context.WithTimeout(ctx, presetTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, path, args...)
		cmd.Env = env
		out, err := cmd.Output()
		return string(out), err
	}
}

// presetTimeout bounds one tool's answer (npm takes a second on a slow disk).
const presetTimeout = 15 * time.Second

// Machine is where the preset reads the toolchains' configuration: their
// own answers, and the files and variables of those that have no command
// to tell it (cargo, Maven).
type Machine struct {
	Run Run
	// Dir is the project root: cargo reads .cargo/config.toml there and in
	// every directory above, Maven the project's pom.xml.
	Dir string
	// Home is the user's home directory ("": this process's).
	Home string
	// Env is the environment the tools see (nil: this process's).
	Env []string
}

// getenv is the value of key in m's environment.
func (m Machine) getenv(key string) string {
	if m.Env == nil {
		return os.Getenv(key)
	}
	v := ""
	for _, kv := range m.Env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// environ is m's environment.
func (m Machine) environ() []string {
	if m.Env == nil {
		return os.Environ()
	}
	return m.Env
}

func (m Machine) home() string {
	if m.Home != "" {
		return m.Home
	}
	h, _ := os.UserHomeDir()
	return h
}

// Registries resolves the preset: for each toolchain that answers, the
// hosts its configuration names; a tool that is not installed is left out.
func Registries(ctx context.Context, m Machine) []Source {
	finders := []func(context.Context, Machine) *Source{npmSource, goSource, pipSource, cargoSource, gemSource, mavenSource}
	out := make([]*Source, len(finders))
	var wg sync.WaitGroup
	for i, f := range finders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = f(ctx, m)
		}()
	}
	wg.Wait()
	var srcs []Source
	for _, s := range out {
		if s != nil && (len(s.Hosts) > 0 || s.Note != "") {
			srcs = append(srcs, *s)
		}
	}
	return srcs
}

// hostOf is the host of a registry URL, "" when it names none.
func hostOf(raw string) string {
	raw = strings.Trim(strings.TrimSpace(raw), `'"`)
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" || u.Scheme == "file" {
		return ""
	}
	return Normalize(u.Hostname())
}

func addHost(hosts []string, h string) []string {
	if h != "" && !slices.Contains(hosts, h) {
		hosts = append(hosts, h)
	}
	return hosts
}

func npmSource(ctx context.Context, m Machine) *Source {
	run := m.Run
	out, err := run(ctx, "npm", "config", "get", "registry")
	if err != nil {
		return nil
	}
	s := &Source{Tool: "npm", From: "npm config get registry"}
	s.Hosts = addHost(s.Hosts, hostOf(firstLine(out)))
	return s
}

func goSource(ctx context.Context, m Machine) *Source {
	run := m.Run
	out, err := run(ctx, "go", "env", "GOPROXY", "GOSUMDB")
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for len(lines) < 2 {
		lines = append(lines, "")
	}
	s := &Source{Tool: "go", From: "go env GOPROXY GOSUMDB"}
	for _, p := range strings.FieldsFunc(lines[0], func(r rune) bool { return r == ',' || r == '|' }) {
		switch p = strings.TrimSpace(p); p {
		case "direct":
			s.Note = "GOPROXY falls back to direct: modules the proxy lacks come from their origin (github.com …), which the preset does not name"
		case "off", "":
		default:
			s.Hosts = addHost(s.Hosts, hostOf(p))
		}
	}
	// GOSUMDB: "name", "name+key" or "name+key URL"; go asks the proxy
	// first (GOPROXY/sumdb/NAME/supported), then NAME or URL itself.
	if f := strings.Fields(lines[1]); len(f) > 0 && f[0] != "off" {
		if len(f) > 1 {
			s.Hosts = addHost(s.Hosts, hostOf(f[1]))
		} else {
			name, _, _ := strings.Cut(f[0], "+")
			s.Hosts = addHost(s.Hosts, hostOf(name))
		}
	}
	return s
}

func pipSource(ctx context.Context, m Machine) *Source {
	run := m.Run
	out, err := run(ctx, "python3", "-m", "pip", "config", "list")
	if err != nil {
		if out, err = run(ctx, "pip", "config", "list"); err != nil {
			return nil
		}
	}
	s := &Source{Tool: "pip", From: "pip config list"}
	for _, line := range strings.Split(out, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || !(strings.HasSuffix(k, ".index-url") || strings.HasSuffix(k, ".extra-index-url")) {
			continue
		}
		for _, u := range strings.Fields(strings.Trim(v, `'"`)) {
			s.Hosts = addHost(s.Hosts, hostOf(u))
		}
	}
	if len(s.Hosts) == 0 {
		s.From = "default"
		s.Hosts = []string{"pypi.org", "files.pythonhosted.org"}
	}
	return s
}

func gemSource(ctx context.Context, m Machine) *Source {
	run := m.Run
	out, err := run(ctx, "gem", "sources", "--list")
	if err != nil {
		return nil
	}
	s := &Source{Tool: "gem", From: "gem sources --list"}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "://") {
			s.Hosts = addHost(s.Hosts, hostOf(line))
		}
	}
	if slices.Contains(s.Hosts, "rubygems.org") {
		s.Hosts = addHost(s.Hosts, "index.rubygems.org")
	}
	return s
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(line)
}
