package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/config"
	"github.com/shellgate/shellgate/policy"
)

// A project file is written by the repository (maybe by the agent): alone, it may only
// tighten. Each loosening setting is ignored with a warning naming its line.
func TestProjectFileMayOnlyTighten(t *testing.T) {
	t.Run("untrusted", projectUntrusted)
	t.Run("trusted by the user file", projectTrustedByUser)
	t.Run("trusted by the caller", projectTrustedByCaller)
}

// tightenProject is TestProjectFileMayOnlyTighten's project file: every setting in it
// loosens but limits.max_timeout and the ask and deny lists.
const tightenProject = `shell = "./evil-sh"

[limits]
max_timeout = "30s"
spill_dir = "/somewhere"

[env]
LD_PRELOAD = "/tmp/x.so"

[secrets]
keep = ["AWS_SECRET_ACCESS_KEY"]
strip = false

[policy]
mode = "auto"
network = true
dedicated_tools = false
allow = ["curl *"]
relax = ["network"]
writable = ["/"]
ask = ["npm publish *"]
deny = ["git push --force *"]
`

// tightenUser is TestProjectFileMayOnlyTighten's user file.
const tightenUser = `
shell = "bash"
[policy]
mode = "untrusted"
dedicated_tools = true
deny = ["make deploy *"]
`

// loosening is each loosening setting of tightenProject: key → line.
var loosening = map[string]int{
	"shell": 1, "limits.spill_dir": 5, "env.LD_PRELOAD": 8, "secrets.keep": 11, "secrets.strip": 12,
	"policy.mode": 15, "policy.network": 16, "policy.dedicated_tools": 17, "policy.allow": 18,
	"policy.relax": 19, "policy.writable": 20,
}

// projectUntrusted: alone, the project file tightens the policy, its limits
// apply, and each loosening setting is ignored with a warning naming its
// line and how to trust the file.
func projectUntrusted(t *testing.T) {
	l := newLab(t)
	write(t, l.user, tightenUser)
	projectPath := write(t, filepath.Join(l.root, config.ProjectFileName), tightenProject)
	cfg, src, err := config.Load(l.opts())
	if err != nil {
		t.Fatal(err)
	}
	wantPolicy := policy.Settings{
		Mode:           policy.ModeUntrusted,
		DedicatedTools: true,
		Ask:            []string{"npm publish *"},
		Deny:           []string{"make deploy *", "git push --force *"},
	}
	if diff := cmp.Diff(wantPolicy, cfg.Policy); diff != "" {
		t.Errorf("policy (-want +got):\n%s", diff)
	}
	if cfg.Shell != "bash" || cfg.SpillDir != "" || cfg.Env != nil || cfg.KeepEnv != nil || cfg.KeepSecrets {
		t.Errorf("project file changed what runs: %+v", cfg)
	}
	if cfg.MaxTimeout != 30*time.Second || cfg.DefaultTimeout != 30*time.Second {
		t.Errorf("limits are not policy and must apply: max %v default %v", cfg.MaxTimeout, cfg.DefaultTimeout)
	}
	got := map[string]int{}
	for _, w := range src.Warnings {
		got[w.Key] = w.Line
		if w.File != projectPath || !strings.Contains(w.Error(), "trust_project_config = true") {
			t.Errorf("warning %q should name %s and say how to trust it", w.Error(), projectPath)
		}
	}
	if diff := cmp.Diff(loosening, got); diff != "" {
		t.Errorf("warnings by key→line (-want +got):\n%s", diff)
	}
	if len(src.Files) != 2 || src.Files[1].Layer != config.LayerProject || src.Files[1].Trusted {
		t.Errorf("Sources.Files = %+v, want user then untrusted project", src.Files)
	}
}

// projectTrustedByUser: trust_project_config in the user file applies every
// setting of the project file, without warnings.
func projectTrustedByUser(t *testing.T) {
	l := newLab(t)
	write(t, l.user, "trust_project_config = true\n"+tightenUser)
	write(t, filepath.Join(l.root, config.ProjectFileName), tightenProject)
	cfg, src, err := config.Load(l.opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Warnings) != 0 {
		t.Errorf("trusted project file still warned: %v", src.Warnings)
	}
	p := cfg.Policy
	if p.Mode != policy.ModeAuto || !p.Network || p.DedicatedTools || !cmp.Equal(p.Allow, []string{"curl *"}) ||
		!cmp.Equal(p.Relax, []string{"network"}) || !cmp.Equal(p.WritablePaths, []string{"/"}) {
		t.Errorf("trusted project settings not applied: %+v", p)
	}
	if cfg.Shell != filepath.Join(l.root, "evil-sh") || cfg.Env["LD_PRELOAD"] != "/tmp/x.so" || !cfg.KeepSecrets {
		t.Errorf("trusted project shell/env/secrets not applied: %+v", cfg)
	}
}

// projectTrustedByCaller: Options.TrustProject applies the project file too.
func projectTrustedByCaller(t *testing.T) {
	l := newLab(t)
	write(t, filepath.Join(l.root, config.ProjectFileName), tightenProject)
	o := l.opts()
	o.TrustProject = true
	cfg, src, err := config.Load(o)
	if err != nil || len(src.Warnings) != 0 || !cfg.Policy.Network {
		t.Errorf("TrustProject: err %v, warnings %v, network %v", err, src.Warnings, cfg.Policy.Network)
	}
}

// Later layers win for scalars; lists accumulate; [env] merges by key.
func TestMergeOrder(t *testing.T) {
	l := newLab(t)
	write(t, l.user, `
trust_project_config = true
[limits]
default_timeout = "10s"
output_limit = "1KB"
[env]
A = "user"
B = "user"
[policy]
deny = ["a *"]
mode = "never"
`)
	write(t, filepath.Join(l.root, config.ProjectFileName), `
[limits]
default_timeout = "20s"
[env]
B = "project"
C = "project"
[policy]
deny = ["b *", "a *"]
mode = "untrusted"
`)
	explicit := write(t, filepath.Join(t.TempDir(), "ci.toml"), `
[limits]
default_timeout = "30s"
[env]
C = "explicit"
[policy]
deny = ["c *"]
`)
	o := l.opts()
	o.ConfigFile = explicit
	cfg, src, err := config.Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DefaultTimeout != 30*time.Second || cfg.OutputLimit != 1024 {
		t.Errorf("timeout %v output %d: want the --config file's 30s and the user's 1KB", cfg.DefaultTimeout, cfg.OutputLimit)
	}
	if want := map[string]string{"A": "user", "B": "project", "C": "explicit"}; !cmp.Equal(cfg.Env, want) {
		t.Errorf("env = %v, want %v", cfg.Env, want)
	}
	if want := []string{"a *", "b *", "c *"}; !cmp.Equal(cfg.Policy.Deny, want) {
		t.Errorf("deny = %q, want %q", cfg.Policy.Deny, want)
	}
	if cfg.Policy.Mode != policy.ModeUntrusted {
		t.Errorf("mode = %q: a trusted project file may set any mode", cfg.Policy.Mode)
	}
	var layers []config.Layer
	for _, f := range src.Files {
		layers = append(layers, f.Layer)
	}
	if want := []config.Layer{config.LayerUser, config.LayerProject, config.LayerExplicit}; !cmp.Equal(layers, want) {
		t.Errorf("layers = %v, want %v", layers, want)
	}
}

func TestDefaultTimeoutAcrossFiles(t *testing.T) {
	l := newLab(t)
	write(t, l.user, "[limits]\ndefault_timeout = \"300s\"\n")
	write(t, filepath.Join(l.root, config.ProjectFileName), "[limits]\nmax_timeout = \"60s\"\n")
	_, _, err := config.Load(l.opts())
	if err == nil || !strings.Contains(err.Error(), l.user+":2: [limits] default_timeout: 5m is more than max_timeout (1m, set in ") {
		t.Errorf("error = %v, want the user file's line blamed and the project file named", err)
	}
}

// --config naming the project file reads it once, as a trusted explicit file.
func TestExplicitProjectFileIsReadOnce(t *testing.T) {
	l := newLab(t)
	path := write(t, filepath.Join(l.root, config.ProjectFileName), "[policy]\nallow = [\"make *\"]\ndeny = [\"x *\"]\n")
	o := l.opts()
	o.ConfigFile = path
	cfg, src, err := config.Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Files) != 1 || src.Files[0].Layer != config.LayerExplicit || len(src.Warnings) != 0 {
		t.Errorf("Sources = %+v, want only the explicit file", src)
	}
	if !cmp.Equal(cfg.Policy.Allow, []string{"make *"}) {
		t.Errorf("allow = %q", cfg.Policy.Allow)
	}
}

func TestBashAllowNetwork(t *testing.T) {
	tests := []struct {
		env, file string
		network   bool
		fromEnv   bool
	}{
		{"", "", false, false},
		{"true", "", true, true},
		{"1", "", true, true},
		{"false", "[policy]\nnetwork = true\n", true, false},
		{"true", "[policy]\nnetwork = true\n", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.env+"/"+tt.file, func(t *testing.T) {
			l := newLab(t)
			write(t, l.user, tt.file)
			o := l.opts()
			o.LookupEnv = func(k string) (string, bool) {
				return tt.env, k == "BASH_ALLOW_NETWORK" && tt.env != ""
			}
			cfg, src, err := config.Load(o)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Policy.Network != tt.network || src.NetworkFromEnv != tt.fromEnv {
				t.Errorf("network %v fromEnv %v, want %v %v", cfg.Policy.Network, src.NetworkFromEnv, tt.network, tt.fromEnv)
			}
		})
	}
}

func TestSizes(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{`1024`, 1024}, {`"512B"`, 512}, {`"50KB"`, 50 << 10}, {`"50kb"`, 50 << 10}, {`"1.5MB"`, 3 << 19},
		{`"4 MiB"`, 4 << 20}, {`"64M"`, 64 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			l := newLab(t)
			write(t, l.user, "[limits]\noutput_limit = "+tt.in+"\n")
			cfg, _, err := config.Load(l.opts())
			if err != nil {
				t.Fatal(err)
			}
			if cfg.OutputLimit != tt.want {
				t.Errorf("output_limit = %s → %d, want %d", tt.in, cfg.OutputLimit, tt.want)
			}
		})
	}
}

// TestProjectFileMayNotRaiseLimits: a project file that raises a limit
// loosens policy (issue 10): ignored with a warning unless trusted; lowering
// one still applies.
func TestProjectFileMayNotRaiseLimits(t *testing.T) {
	const project = `[limits]
output_limit = "10MB"
spill_max = "1TB"
spill_total = "1TB"
default_timeout = "10m"
max_timeout = "10m"
spill_retention = "48h"
`
	l := newLab(t)
	write(t, filepath.Join(l.root, config.ProjectFileName), project)
	cfg, src, err := config.Load(l.opts())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OutputLimit != shellgate.DefaultOutputLimit || cfg.SpillMax != shellgate.DefaultSpillMax || cfg.SpillTotal != shellgate.DefaultSpillTotal ||
		cfg.DefaultTimeout != shellgate.DefaultTimeout || cfg.MaxTimeout != shellgate.MaxTimeout ||
		cfg.SpillRetention != shellgate.DefaultSpillRetention {
		t.Errorf("raised limits applied: %+v", cfg)
	}
	keys := map[string]bool{}
	for _, w := range src.Warnings {
		keys[w.Key] = strings.Contains(w.Error(), "loosens policy")
	}
	for _, k := range []string{"limits.output_limit", "limits.spill_max", "limits.spill_total", "limits.default_timeout", "limits.spill_retention"} {
		if !keys[k] {
			t.Errorf("no loosening warning for %s: %v", k, src.Warnings)
		}
	}

	l = newLab(t)
	write(t, filepath.Join(l.root, config.ProjectFileName), "[limits]\noutput_limit = \"10KB\"\n")
	if cfg, _, err := config.Load(l.opts()); err != nil || cfg.OutputLimit != 10*1024 {
		t.Errorf("lowering the output limit: %v %d", err, cfg.OutputLimit)
	}
	o := newLab(t)
	write(t, filepath.Join(o.root, config.ProjectFileName), project)
	opts := o.opts()
	opts.TrustProject = true
	if cfg, _, err := config.Load(opts); err != nil || cfg.OutputLimit != 10<<20 && cfg.OutputLimit != 10*1000*1000 {
		t.Errorf("trusted raise: %v %d", err, cfg.OutputLimit)
	}
}

// [sandbox]: an untrusted project file may make the sandbox stricter, never weaker.
func TestSandboxTable(t *testing.T) {
	l := newLab(t)
	write(t, l.user, "[sandbox]\nprocs = 1000\n")
	write(t, filepath.Join(l.root, config.ProjectFileName), `[sandbox]
mode = "off"
profile = "full-access"
caches = false
hide = ["~/.secret-tool"]
protect = ["deploy"]
procs = 5000
tmp_size = "1GB"
`)
	cfg, src, err := config.Load(l.opts())
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Sandbox
	if s.Mode != "" || s.Profile != "" || !s.NoCaches || s.Limits.Procs != 1000 || s.TmpSize != 1<<30 ||
		len(s.Hide) != 1 || len(s.Protect) != 1 {
		t.Errorf("sandbox %+v", s)
	}
	var warned []string
	for _, w := range src.Warnings {
		warned = append(warned, w.Error())
	}
	for _, key := range []string{"[sandbox] mode", "[sandbox] profile", "[sandbox] procs"} {
		if !strings.Contains(strings.Join(warned, "\n"), key) {
			t.Errorf("no warning for %s: %v", key, warned)
		}
	}
	write(t, filepath.Join(l.root, config.ProjectFileName), "[sandbox]\nmode = \"sometimes\"\n")
	if _, _, err := config.Load(l.opts()); err == nil || !strings.Contains(err.Error(), "[sandbox] mode: unknown mode") {
		t.Errorf("bad mode: %v", err)
	}
}

// [sandbox] host_ports: each port forwarded lets commands reach a server of the
// host, so an untrusted project file cannot add one; the user's files can.
func TestSandboxHostPorts(t *testing.T) {
	warnedAbout := func(src config.Sources, key string) bool {
		for _, w := range src.Warnings {
			if strings.Contains(w.Error(), key) {
				return true
			}
		}
		return false
	}
	l := newLab(t)
	write(t, l.user, "[sandbox]\nhost_ports = [3000]\n")
	project := filepath.Join(l.root, config.ProjectFileName)
	for _, tc := range []struct {
		name, project string
		trust         bool
		want          []int
		warned        bool
	}{
		{"project adds a port", "[sandbox]\nhost_ports = [3000, 5432]\n", false, []int{3000}, true},
		{"project adds only a port", "[sandbox]\nhost_ports = [22]\n", false, []int{3000}, true},
		{"project repeats the user's port", "[sandbox]\nhost_ports = [3000]\n", false, []int{3000}, false},
		{"trusted project adds a port", "[sandbox]\nhost_ports = [3000, 5432]\n", true, []int{3000, 5432}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write(t, project, tc.project)
			opts := l.opts()
			opts.TrustProject = tc.trust
			cfg, src, err := config.Load(opts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cfg.Sandbox.HostPorts, tc.want) {
				t.Errorf("host ports %v, want %v", cfg.Sandbox.HostPorts, tc.want)
			}
			if got := warnedAbout(src, "[sandbox] host_ports"); got != tc.warned {
				t.Errorf("warned %v, want %v: %v", got, tc.warned, src.Warnings)
			}
		})
	}

	os.Remove(project)
	extra := write(t, filepath.Join(t.TempDir(), "extra.toml"), "[sandbox]\nhost_ports = [5432, 3000]\n")
	opts := l.opts()
	opts.ConfigFile = extra
	if cfg, _, err := config.Load(opts); err != nil || !slices.Equal(cfg.Sandbox.HostPorts, []int{3000, 5432}) {
		t.Errorf("--config adds a port: %v %v", cfg.Sandbox.HostPorts, err)
	}

	for _, bad := range []struct{ toml, msg string }{
		{"host_ports = [0]", "[sandbox] host_ports: entry 1, 0: want a TCP port, 1 to 65535"},
		{"host_ports = [80, 65536]", "entry 2, 65536"},
		{"host_ports = [\"3000\"]", "host_ports"},
		{"host_ports = [" + strings.Repeat("1,", 40) + "2]", ""},
	} {
		write(t, l.user, "[sandbox]\n"+bad.toml+"\n")
		_, _, err := config.Load(l.opts())
		if bad.msg == "" {
			if err != nil {
				t.Errorf("%s: %v", bad.toml, err) // duplicates are one port
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), bad.msg) {
			t.Errorf("%s: error %v, want %q", bad.toml, err, bad.msg)
		}
	}
	ports := make([]string, 40)
	for i := range ports {
		ports[i] = strconv.Itoa(10000 + i)
	}
	write(t, l.user, "[sandbox]\nhost_ports = ["+strings.Join(ports, ", ")+"]\n")
	if _, _, err := config.Load(l.opts()); err == nil || !strings.Contains(err.Error(), "at most 32") {
		t.Errorf("40 ports: %v", err)
	}
}

// [network] allow: each domain is a place commands can send the project to,
// so an untrusted project file cannot add one; the user's files can, and a
// bad entry names its line.
func TestNetworkAllow(t *testing.T) {
	l := newLab(t)
	write(t, l.user, "[network]\nallow = [\"registry.npmjs.org\", \"registries\"]\n")
	project := write(t, filepath.Join(l.root, config.ProjectFileName), "[network]\nallow = [\"evil.example\"]\n")
	cfg, src, err := config.Load(l.opts())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"registry.npmjs.org", "registries"}; !slices.Equal(cfg.Network.Allow, want) {
		t.Errorf("allow %q, want %q", cfg.Network.Allow, want)
	}
	if len(src.Warnings) != 1 || !strings.Contains(src.Warnings[0].Error(), "[network] allow ignored") {
		t.Errorf("warnings %v", src.Warnings)
	}
	opts := l.opts()
	opts.TrustProject = true
	if cfg, _, err := config.Load(opts); err != nil || !slices.Equal(cfg.Network.Allow, []string{"registry.npmjs.org", "registries", "evil.example"}) {
		t.Errorf("trusted project: %q %v", cfg.Network.Allow, err)
	}
	os.Remove(project)
	for _, bad := range []string{`allow = ["https://registry.npmjs.org"]`, `allow = ["*"]`, `allow = "x.example"`, `allowed = ["x.example"]`} {
		write(t, l.user, "[network]\n"+bad+"\n")
		if _, _, err := config.Load(l.opts()); err == nil || !strings.Contains(err.Error(), ":2:") {
			t.Errorf("%s: %v", bad, err)
		}
	}
	// An empty entry is refused, saying so, not skipped.
	for _, bad := range []string{`allow = [""]`, `allow = ["registry.npmjs.org", " "]`} {
		write(t, l.user, "[network]\n"+bad+"\n")
		if _, _, err := config.Load(l.opts()); err == nil || !strings.Contains(err.Error(), ":2:") || !strings.Contains(err.Error(), "is empty") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// [sandbox] visible shows commands more of the machine: the user's files may
// add paths, an untrusted project file may not (it is ignored, with a
// warning), and a relative path is refused.
func TestSandboxVisible(t *testing.T) {
	l := newLab(t)
	write(t, l.user, "[sandbox]\nvisible = [\"~/notes\"]\n")
	project := filepath.Join(l.root, config.ProjectFileName)
	write(t, project, "[sandbox]\nvisible = [\"~/.ssh\"]\n")
	cfg, src, err := config.Load(l.opts())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Sandbox.Visible, []string{"~/notes"}) {
		t.Errorf("visible %v, want the user's only", cfg.Sandbox.Visible)
	}
	warned := false
	for _, w := range src.Warnings {
		warned = warned || strings.Contains(w.Error(), "sandbox.visible") || strings.Contains(w.Error(), "[sandbox] visible")
	}
	if !warned {
		t.Errorf("the project's visible was ignored silently: %v", src.Warnings)
	}
	os.Remove(project)
	write(t, l.user, "[sandbox]\nvisible = [\"notes\"]\n")
	if _, _, err := config.Load(l.opts()); err == nil || !strings.Contains(err.Error(), "visible") {
		t.Errorf("a relative visible path: %v", err)
	}
}
