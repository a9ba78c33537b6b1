package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/config"
	"github.com/shellgate/shellgate/policy"
)

// lab is a throwaway layout: a home, a user config dir and a project root.
type lab struct {
	home, user, root string
}

func newLab(t *testing.T) lab {
	t.Helper()
	dir := t.TempDir()
	l := lab{
		home: filepath.Join(dir, "home"),
		user: filepath.Join(dir, "home", ".config", "shellgate", "config.toml"),
		root: filepath.Join(dir, "project"),
	}
	for _, d := range []string{l.home, filepath.Dir(l.user), l.root} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func (l lab) opts() config.LoadOptions {
	return config.LoadOptions{
		Root:       l.root,
		UserConfig: l.user,
		Home:       l.home,
		LookupEnv:  func(string) (string, bool) { return "", false },
	}
}

func TestLoadDefaults(t *testing.T) {
	l := newLab(t)
	cfg, src, err := config.Load(l.opts())
	if err != nil {
		t.Fatal(err)
	}
	want := shellgate.Config{
		Root:           l.root,
		DefaultTimeout: 120 * time.Second,
		MaxTimeout:     600 * time.Second,
		KillGrace:      2 * time.Second,
		OutputLimit:    50 * 1024,
		SpillMax:       1 << 30,
		SpillTotal:     2 << 30,
		SpillRetention: 24 * time.Hour,
		PolicyFile:     l.user, // read if it existed, where allowing a command goes
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if len(src.Files) != 0 || len(src.Warnings) != 0 {
		t.Errorf("no files exist, yet Sources = %+v", src)
	}
}

func TestLoadEveryKey(t *testing.T) {
	l := newLab(t)
	write(t, l.user, `
root = "../../../project"   # relative to this file's directory
shell = "sh"

[limits]
default_timeout = "90s"
max_timeout = "5m"
kill_grace = "500ms"
output_limit = "4KB"
spill_dir = "~/spill"
spill_max = 1048576
spill_total = "8MB"
spill_retention = "1h"

[env]
MYCODEAGENT = "1"

[secrets]
keep = ["MY_PUBLIC_KEY_ID"]
strip = false

[policy]
mode = "untrusted"
network = true
dedicated_tools = true
allow = ["make *"]
ask = ["npm publish *"]
deny = ["git push --force *"]
relax = ["interactive"]
writable = ["~/.cache/go-build", "cache", "/var/tmp/x/../y"]
`)
	opts := l.opts()
	opts.Root = "" // from the file
	cfg, src, err := config.Load(opts)
	if err != nil {
		t.Fatal(err)
	}
	userDir := filepath.Dir(l.user)
	want := shellgate.Config{
		Root:           filepath.Join(userDir, "..", "..", "..", "project"),
		Shell:          "sh",
		DefaultTimeout: 90 * time.Second,
		MaxTimeout:     5 * time.Minute,
		KillGrace:      500 * time.Millisecond,
		OutputLimit:    4096,
		SpillDir:       filepath.Join(l.home, "spill"),
		SpillMax:       1 << 20,
		SpillTotal:     8 << 20,
		SpillRetention: time.Hour,
		Env:            map[string]string{"MYCODEAGENT": "1"},
		KeepEnv:        []string{"MY_PUBLIC_KEY_ID"},
		KeepSecrets:    true,
		Policy: policy.Settings{
			Mode:           policy.ModeUntrusted,
			Network:        true,
			DedicatedTools: true,
			Allow:          []string{"make *"},
			Ask:            []string{"npm publish *"},
			Deny:           []string{"git push --force *"},
			Relax:          []string{"interactive"},
			WritablePaths:  []string{filepath.Join(l.home, ".cache", "go-build"), filepath.Join(userDir, "cache"), "/var/tmp/y"},
		},
		PolicyFile: l.user,
	}
	want.Root = filepath.Clean(want.Root)
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if len(src.Files) != 1 || src.Files[0].Layer != config.LayerUser || !src.Files[0].Trusted {
		t.Errorf("Sources.Files = %+v, want the user file, trusted", src.Files)
	}
}

// Every bad file must fail with a message naming the file, the line and the key.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		project string // .shellgate.toml content
		want    string // substring of the error, after "<file>:"
	}{
		{"unknown key", "[policy]\nmode = \"auto\"\n\nnetwrok = true\n",
			`:4: unknown key "netwrok" in [policy]; did you mean "network"?`},
		{"unknown top-level key", "sell = \"bash\"\n", `:1: unknown key "sell"; did you mean "shell"?`},
		{"unknown table", "\n[polcy]\ndeny = []\n", `:2: unknown table "polcy"; did you mean "policy"?`},
		{"unknown dotted key", "policy.dny = [\"x\"]\n", `:1: unknown key "dny" in [policy]; did you mean "deny"?`},
		{"unknown key in inline table", "policy = { network = false, allw = [] }\n", `:1: unknown key "allw" in [policy]`},
		{"unknown key, nothing close", "[limits]\nfrobnicate = 1\n", `:2: unknown key "frobnicate" in [limits]`},
		// A key in the wrong table names the table it belongs in, before a
		// typo of this one's (deny at the top level was "did you mean env?").
		{"key in the wrong table", "mode = \"never\"\n", `:1: unknown key "mode"; did you mean "mode" in [policy] or "mode" in [sandbox]?`},
		{"key in the wrong table, not a typo here", "deny = [\"x\"]\n", `:1: unknown key "deny"; did you mean "deny" in [policy]?`},
		{"key of another table", "[sandbox]\nnetwork = true\n", `:2: unknown key "network" in [sandbox]; did you mean "network" in [policy]?`},
		{"a word of a key", "[limits]\ntimeout = \"5s\"\n", `:2: unknown key "timeout" in [limits]; did you mean "default_timeout" or "max_timeout"?`},
		{"a word of a key in another table", "timeout = \"5s\"\n", `:1: unknown key "timeout"; did you mean "default_timeout" or "max_timeout" in [limits]?`},
		{"a key's words and more", "[policy]\nallow_network = true\n", `:2: unknown key "allow_network" in [policy]; did you mean "network" or "allow"?`},
		{"a typo first", "[policy]\nwritable_paths = []\n", `:2: unknown key "writable_paths" in [policy]; did you mean "writable"?`},
		{"duration as integer", "[limits]\ndefault_timeout = 90\n", `:2: [limits] default_timeout: want a string, got a TOML integer`},
		{"duration without unit", "[limits]\ndefault_timeout = \"90\"\n", `:2: [limits] default_timeout: "90" has no unit; write e.g. "90s" or "90ms"`},
		{"duration garbage", "[limits]\nmax_timeout = \"soon\"\n", `:2: [limits] max_timeout: "soon" is not a duration`},
		{"timeout above seed bound", "[limits]\nmax_timeout = \"601s\"\n", `:2: [limits] max_timeout: 10m1s is out of range: want 1ms to 10m`},
		{"timeout below seed bound", "[limits]\ndefault_timeout = \"500us\"\n", `:2: [limits] default_timeout: 500µs is out of range`},
		{"kill grace too long", "[limits]\nkill_grace = \"3s\"\n", `[limits] kill_grace: 3s is out of range: want 0s to 2s`},
		{"default above max", "[limits]\nmax_timeout = \"10s\"\ndefault_timeout = \"20s\"\n", `:3: [limits] default_timeout: 20s is more than max_timeout (10s)`},
		{"bad size", "[limits]\noutput_limit = \"lots\"\n", `:2: [limits] output_limit: "lots" is not a size`},
		{"size as bool", "[limits]\nspill_max = true\n", `:2: [limits] spill_max: want a byte count (an integer) or a string such as "50KB", got a boolean`},
		{"size too small", "[limits]\noutput_limit = 10\n", `[limits] output_limit: 10 bytes is out of range`},
		{"bool as string", "[policy]\nnetwork = \"yes\"\n", `:2: [policy] network: want true or false, got a TOML string`},
		// A value without its quotes was go-toml's "expected keyword \"nan\"" (never)
		// or "unexpected character U+0061 'a' at start of value".
		{"string without quotes", "[policy]\nmode = never\n", `:2: [policy] mode: a string needs quotes: mode = "never"`},
		{"string without quotes, a comment after", "[policy]\nnetwork = false\nmode=auto # the default\n", `:3: [policy] mode: a string needs quotes: mode = "auto"`},
		{"array of strings without quotes", "[policy]\ndeny = [git push *, \"rm *\"]\n", `:2: [policy] deny: a string needs quotes: deny = ["git push *", "rm *"]`},
		{"top-level string without quotes", "shell = bash\n", `:1: shell: a string needs quotes: shell = "bash"`},
		{"no value", "[policy]\nmode =\n", `:2: `},
		{"an unterminated string is not a missing quote pair", "[policy]\nmode = \"auto\n", `:2: basic strings cannot have new lines`},
		{"list as string", "[policy]\ndeny = \"rm *\"\n", `:2: [policy] deny: want an array of strings, got a TOML string`},
		{"bad mode", "[policy]\nmode = \"yolo\"\n", `:2: [policy] mode: unknown approval mode "yolo"; want "auto", "untrusted" or "never"`},
		{"malformed pattern", "[policy]\nask = [\"npm publish\"]\ndeny = [\"git [push *\"]\n",
			`:3: [policy] deny: entry 1, "git [push *": policy: malformed deny pattern "git [push *": token "[push": syntax error in pattern`},
		{"empty pattern", "[policy]\ndeny = [\"rm *\", \"  \"]\n", `:2: [policy] deny: entry 2, "  ": empty pattern`},
		{"bad env name", "[env]\n\"MY-VAR\" = \"1\"\n", `:2: [env] MY-VAR: not a valid environment variable name`},
		{"env value not string", "[env]\nX = 1\n", `:2: [env] X: want a string, got a TOML integer`},
		{"bad keep name", "[secrets]\nkeep = [\"A=B\"]\n", `:2: [secrets] keep: entry 1, "A=B", is not a valid environment variable name`},
		{"root in project file", "\nroot = \"/\"\n", `:2: root: only allowed in the user file or the --config file`},
		{"trust in project file", "trust_project_config = true\n", `:1: trust_project_config: only allowed in the user file or the --config file`},
		{"syntax error", "[policy]\ndeny = [\"rm *\"\n", `:2:`},
		{"duplicate key", "[policy]\nnetwork = true\nnetwork = false\n", `:3: key network is already defined`},
		{"bad home expansion", "[limits]\nspill_dir = \"~bob/x\"\n", `:2: [limits] spill_dir: cannot expand "~bob/x": only ~ and ~/… are supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLab(t)
			path := write(t, filepath.Join(l.root, config.ProjectFileName), tt.project)
			_, _, err := config.Load(l.opts())
			if err == nil {
				t.Fatalf("Load accepted:\n%s", tt.project)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+":") || !strings.Contains(msg, tt.want) {
				t.Errorf("error\n  %s\nwant it to start with %s and contain\n  %s", msg, path, tt.want)
			}
			var ce *config.ConfigError
			if !errors.As(err, &ce) || ce.Line == 0 {
				t.Errorf("error %v: want a *ConfigError with a line, got %#v", err, ce)
			}
		})
	}
}

func TestLoadOptionErrors(t *testing.T) {
	l := newLab(t)
	notDir := write(t, filepath.Join(l.root, "file"), "x")
	tests := []struct {
		name string
		edit func(*config.LoadOptions)
		want string
	}{
		{"missing --config", func(o *config.LoadOptions) { o.ConfigFile = filepath.Join(l.root, "nope.toml") },
			"nope.toml does not exist (given with --config)"},
		{"--config is a directory", func(o *config.LoadOptions) { o.ConfigFile = l.root }, "is a directory, not a TOML file"},
		{"missing root", func(o *config.LoadOptions) { o.Root = filepath.Join(l.root, "gone") }, "gone (from --root) does not exist"},
		{"root is a file", func(o *config.LoadOptions) { o.Root = notDir }, "(from --root) is not a directory"},
		{"bad BASH_ALLOW_NETWORK", func(o *config.LoadOptions) {
			o.LookupEnv = func(k string) (string, bool) { return "maybe", k == "BASH_ALLOW_NETWORK" }
		}, `BASH_ALLOW_NETWORK="maybe": want true or false`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := l.opts()
			tt.edit(&o)
			_, _, err := config.Load(o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// All errors in a file are reported, not just the first unknown key.
func TestLoadReportsEveryUnknownKey(t *testing.T) {
	l := newLab(t)
	write(t, filepath.Join(l.root, config.ProjectFileName), "[policy]\nnetwrok = false\ndny = []\n")
	_, _, err := config.Load(l.opts())
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{`:2: unknown key "netwrok"`, `:3: unknown key "dny"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestUnknownRelaxName(t *testing.T) {
	l := newLab(t)
	write(t, l.user, "[policy]\nrelax = [\"interactive\", \"netwrk\"]\n")
	_, _, err := config.Load(l.opts())
	if err == nil || !strings.Contains(err.Error(), `:2: [policy] relax: entry 2, "netwrk": no built-in rule has this name; the rules are `) ||
		!strings.Contains(err.Error(), "network") {
		t.Errorf("error = %v", err)
	}
}

// The commented example file documents every key; it must load as it is.
func TestExampleFileLoads(t *testing.T) {
	l := newLab(t)
	o := l.opts()
	o.ConfigFile = filepath.Join("..", "examples", "shellgate.toml")
	cfg, src, err := config.Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(src.Files) != 1 || cfg.Env["MYCODEAGENT"] != "1" || cfg.OutputLimit != 50<<10 ||
		!cmp.Equal(cfg.Policy.Deny, []string{"git push --force *"}) ||
		!cmp.Equal(cfg.Policy.WritablePaths, []string{filepath.Join(l.home, ".cache", "go-build")}) {
		t.Errorf("examples/shellgate.toml loaded as %+v", cfg)
	}
}

// Warnings are values; printed with %v they must read as messages, not structs.
func TestWarningPrintsAsMessage(t *testing.T) {
	l := newLab(t)
	write(t, filepath.Join(l.root, config.ProjectFileName), "[policy]\nallow = [\"x *\"]\n")
	_, src, err := config.Load(l.opts())
	if err != nil || len(src.Warnings) != 1 {
		t.Fatalf("err %v warnings %v", err, src.Warnings)
	}
	if got := fmt.Sprintf("%v", src.Warnings[0]); !strings.Contains(got, ".shellgate.toml:2: [policy] allow ignored") {
		t.Errorf("%%v of a warning = %q", got)
	}
}

// PolicyFile, the file an APPROVAL_REQUIRED error tells the user to allow a
// command in, is one that Load reads: the user file (missing or not), else the
// --config file; none when neither is read.
func TestLoadPolicyFile(t *testing.T) {
	l := newLab(t)
	explicit := write(t, filepath.Join(l.home, "explicit.toml"), "")
	for _, tc := range []struct {
		name string
		edit func(*config.LoadOptions)
		want string
	}{
		{"user file", func(*config.LoadOptions) {}, l.user},
		{"user and --config", func(o *config.LoadOptions) { o.ConfigFile = explicit }, l.user},
		{"--no-user-config --config", func(o *config.LoadOptions) { o.NoUserConfig, o.ConfigFile = true, explicit }, explicit},
		{"--no-user-config", func(o *config.LoadOptions) { o.NoUserConfig = true }, ""},
	} {
		o := l.opts()
		tc.edit(&o)
		cfg, _, err := config.Load(o)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.PolicyFile != tc.want {
			t.Errorf("%s: PolicyFile %q, want %q", tc.name, cfg.PolicyFile, tc.want)
		}
	}
}

// The network rule's refusal tells the user how to turn the network on in
// words the configuration takes: the key it names, as it names it, loads and
// turns the network on ("config network = true" named no table).
func TestNetworkAdviceNamesARealKey(t *testing.T) {
	l := newLab(t)
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	v := e.Check("curl https://example.com", policy.Env{Root: l.root, Dir: l.root})
	table, key, ok := strings.Cut(v.Reason, "] network = true")
	if v.Rule != policy.RuleNetwork || !ok || !strings.Contains(key, "--allow-network") {
		t.Fatalf("the refusal names no [table] network = true: %s", v.Reason)
	}
	table = table[strings.LastIndex(table, "[")+1:]
	write(t, l.user, fmt.Sprintf("[%s]\nnetwork = true\n", table))
	cfg, _, err := config.Load(l.opts())
	if err != nil || !cfg.Policy.Network {
		t.Errorf("[%s] network = true: %v, network %v", table, err, cfg.Policy.Network)
	}
}
