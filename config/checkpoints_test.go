package config_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/config"
)

// [checkpoints]: the user file sets it; a project file may not turn them
// off, move them, or make them keep less, unless the user trusts it; it may
// keep more.
func TestCheckpointsTable(t *testing.T) {
	l := newLab(t)
	write(t, l.user, "[checkpoints]\ndir = \"~/cp\"\nmax_size = \"4GB\"\nmax_age = \"72h\"\nmax_count = 500\nignored_max_size = \"1MB\"\nkeep_ignored = [\".env\"]\n")
	project := write(t, filepath.Join(l.root, config.ProjectFileName), `[checkpoints]
enabled = false
dir = "/var/tmp/elsewhere"
max_size = "1GB"
max_age = "1h"
max_count = 10
ignored_max_size = "1KB"
keep_ignored = ["*.local"]
`)
	cfg, src, err := config.Load(l.opts())
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Checkpoints
	if c.Off || c.Dir != filepath.Join(l.home, "cp") || c.MaxSize != 4<<30 || c.MaxAge != 72*time.Hour || c.MaxCount != 500 || c.IgnoredMaxSize != 1<<20 {
		t.Errorf("checkpoints %+v", c)
	}
	if !slices.Equal(c.KeepIgnored, []string{".env", "*.local"}) {
		t.Errorf("keep_ignored %q: the project's pattern is added to the user's", c.KeepIgnored)
	}
	warned := map[string]int{}
	for _, w := range src.Warnings {
		warned[w.Key] = w.Line
	}
	for key, line := range map[string]int{"checkpoints.enabled": 2, "checkpoints.dir": 3, "checkpoints.max_size": 4,
		"checkpoints.max_age": 5, "checkpoints.max_count": 6, "checkpoints.ignored_max_size": 7} {
		if warned[key] != line {
			t.Errorf("no warning for %s at %s:%d: %v", key, project, line, src.Warnings)
		}
	}
	write(t, project, "[checkpoints]\nenabled = false\nmax_count = 10\n")
	opts := l.opts()
	opts.TrustProject = true
	if cfg, _, err = config.Load(opts); err != nil || !cfg.Checkpoints.Off || cfg.Checkpoints.MaxCount != 10 {
		t.Errorf("trusted: %v %+v", err, cfg.Checkpoints)
	}
}

// keeper_idle: the user's file sets the keeper's idle time or turns it off;
// a project file may turn it off, not start one.
func TestCheckpointsKeeperIdle(t *testing.T) {
	tests := []struct {
		user, project string
		want          time.Duration
	}{
		{"", "", 0},
		{"keeper_idle = \"30s\"", "", 30 * time.Second},
		{"keeper_idle = \"0\"", "", -1},
		{"keeper_idle = \"off\"", "", -1},
		{"keeper_idle = \"off\"", "keeper_idle = \"1h\"", -1},
		{"", "keeper_idle = \"off\"", -1},
	}
	for _, tt := range tests {
		l := newLab(t)
		write(t, l.user, "[checkpoints]\n"+tt.user+"\n")
		write(t, filepath.Join(l.root, config.ProjectFileName), "[checkpoints]\n"+tt.project+"\n")
		cfg, _, err := config.Load(l.opts())
		if err != nil || cfg.Checkpoints.KeeperIdle != tt.want {
			t.Errorf("user %q, project %q: %v, keeper idle %v, want %v", tt.user, tt.project, err, cfg.Checkpoints.KeeperIdle, tt.want)
		}
	}
}

func TestCheckpointsTableErrors(t *testing.T) {
	tests := []struct{ file, want string }{
		{"[checkpoints]\nenabld = true\n", `:2: unknown key "enabld" in [checkpoints]; did you mean "enabled"?`},
		{"[checkpoints]\nmax_size = \"12\"\n", `:2: [checkpoints] max_size: 12 bytes is too small`},
		{"[checkpoints]\nmax_age = \"5s\"\n", `[checkpoints] max_age: 5s is out of range`},
		{"[checkpoints]\nmax_count = 0\n", `[checkpoints] max_count: 0 is out of range`},
		{"[checkpoints]\nkeep_ignored = [\"[\"]\n", `[checkpoints] keep_ignored: pattern 1 ("[") is not a valid file name pattern`},
		{"[checkpoints]\nignored_max_size = \"2GB\"\n", `[checkpoints] ignored_max_size: 2147483648 bytes is out of range`},
		{"[checkpoints]\nkeeper_idle = \"48h\"\n", `[checkpoints] keeper_idle: 48h is out of range`},
		{"[checkpoints]\nkeeper_idle = \"soon\"\n", `[checkpoints] keeper_idle:`},
		{"[checkpoints]\nmax_file_size = \"12KB\"\n", `:2: [checkpoints] max_file_size: 12288 bytes is out of range: want 1MB to 64GB`},
		{"[checkpoints]\nmax_file_size = \"1TB\"\n", `[checkpoints] max_file_size:`},
		{"[checkpoints]\nmax_file_size = \"big\"\n", `[checkpoints] max_file_size:`},
		{"[checkpoints]\nmax_file_sise = \"1GB\"\n", `:2: unknown key "max_file_sise" in [checkpoints]; did you mean "max_file_size"?`},
	}
	for _, tt := range tests {
		l := newLab(t)
		write(t, l.user, tt.file)
		_, _, err := config.Load(l.opts())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v, want %q", tt.file, err, tt.want)
		}
	}
}

// max_file_size: the user's file sets it (a size, as a string or bytes); a
// project file may neither lower it (checkpoints keep less) nor raise it (a
// big file it holds would stall each checkpoint), unless trusted.
func TestCheckpointsMaxFileSize(t *testing.T) {
	tests := []struct {
		user, project string
		trusted       bool
		want          int64
		warned        bool
	}{
		{"", "", false, 0, false},
		{"max_file_size = \"1GB\"", "", false, 1 << 30, false},
		{"max_file_size = 67108864", "", false, 64 << 20, false},
		{"", "max_file_size = \"16MB\"", false, 0, true},
		{"", "max_file_size = \"8GB\"", false, 0, true},
		{"max_file_size = \"1GB\"", "max_file_size = \"1GB\"", false, 1 << 30, false},
		{"max_file_size = \"1GB\"", "max_file_size = \"2GB\"", false, 1 << 30, true},
		{"", "max_file_size = \"16MB\"", true, 16 << 20, false},
	}
	for _, tt := range tests {
		l := newLab(t)
		write(t, l.user, "[checkpoints]\n"+tt.user+"\n")
		write(t, filepath.Join(l.root, config.ProjectFileName), "[checkpoints]\n"+tt.project+"\n")
		opts := l.opts()
		opts.TrustProject = tt.trusted
		cfg, src, err := config.Load(opts)
		if err != nil || cfg.Checkpoints.MaxFileSize != tt.want {
			t.Errorf("user %q, project %q: %v, max file size %d, want %d", tt.user, tt.project, err, cfg.Checkpoints.MaxFileSize, tt.want)
		}
		warned := slices.ContainsFunc(src.Warnings, func(w config.ConfigError) bool { return w.Key == "checkpoints.max_file_size" })
		if warned != tt.warned {
			t.Errorf("user %q, project %q: warned %v, want %v (%v)", tt.user, tt.project, warned, tt.warned, src.Warnings)
		}
	}
}

// ignored_link_max_size: the user's file sets it ("0" or "off": no links);
// a project file may change it neither way (lower keeps less, higher makes
// each write-open of such a file in the sandbox copy more), unless trusted;
// a bad value is an error naming the key.
func TestCheckpointsLinkMaxSize(t *testing.T) {
	tests := []struct {
		user, project string
		trusted       bool
		want          int64
		warned        bool
		err           string
	}{
		{"", "", false, 0, false, ""},
		{`ignored_link_max_size = "1GB"`, "", false, 1 << 30, false, ""},
		{`ignored_link_max_size = "0"`, "", false, -1, false, ""},
		{`ignored_link_max_size = "off"`, "", false, -1, false, ""},
		{"", `ignored_link_max_size = "off"`, false, 0, true, ""},
		{"", `ignored_link_max_size = "8GB"`, false, 0, true, ""},
		{"", `ignored_link_max_size = "16MB"`, true, 16 << 20, false, ""},
		{`ignored_link_max_size = "lots"`, "", false, 0, false, `ignored_link_max_size: "lots" is not a size`},
		{`ignored_link_max_size = "100GB"`, "", false, 0, false, "out of range"},
	}
	for _, tt := range tests {
		l := newLab(t)
		write(t, l.user, "[checkpoints]\n"+tt.user+"\n")
		write(t, filepath.Join(l.root, config.ProjectFileName), "[checkpoints]\n"+tt.project+"\n")
		opts := l.opts()
		opts.TrustProject = tt.trusted
		cfg, src, err := config.Load(opts)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("user %q: %v, want an error naming %q", tt.user, err, tt.err)
			}
			continue
		}
		if err != nil || cfg.Checkpoints.LinkMaxSize != tt.want {
			t.Errorf("user %q, project %q: %v, link max size %d, want %d", tt.user, tt.project, err, cfg.Checkpoints.LinkMaxSize, tt.want)
		}
		warned := slices.ContainsFunc(src.Warnings, func(w config.ConfigError) bool { return w.Key == "checkpoints.ignored_link_max_size" })
		if warned != tt.warned {
			t.Errorf("user %q, project %q: warned %v, want %v (%v)", tt.user, tt.project, warned, tt.warned, src.Warnings)
		}
	}
}

// ignored_link_copy_max_size: the user's file sets it ("0" or "off": none
// copied); a project file may change it neither way (lower, undo puts back
// fewer writes; higher, each write-open of such a file copies more), unless
// trusted; a bad value is an error naming the key.
func TestCheckpointsLinkCopyMaxSize(t *testing.T) {
	tests := []struct {
		user, project string
		trusted       bool
		want          int64
		warned        bool
		err           string
	}{
		{"", "", false, 0, false, ""},
		{`ignored_link_copy_max_size = "256MB"`, "", false, 256 << 20, false, ""},
		{`ignored_link_copy_max_size = "0"`, "", false, -1, false, ""},
		{`ignored_link_copy_max_size = "off"`, "", false, -1, false, ""},
		{"", `ignored_link_copy_max_size = "off"`, false, 0, true, ""},
		{"", `ignored_link_copy_max_size = "1GB"`, false, 0, true, ""},
		{"", `ignored_link_copy_max_size = "16MB"`, false, 0, false, ""}, // the default: no change
		{"", `ignored_link_copy_max_size = "1MB"`, true, 1 << 20, false, ""},
		{`ignored_link_copy_max_size = "lots"`, "", false, 0, false, `ignored_link_copy_max_size: "lots" is not a size`},
		{`ignored_link_copy_max_size = "100GB"`, "", false, 0, false, "out of range"},
	}
	for _, tt := range tests {
		l := newLab(t)
		write(t, l.user, "[checkpoints]\n"+tt.user+"\n")
		write(t, filepath.Join(l.root, config.ProjectFileName), "[checkpoints]\n"+tt.project+"\n")
		opts := l.opts()
		opts.TrustProject = tt.trusted
		cfg, src, err := config.Load(opts)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("user %q: %v, want an error naming %q", tt.user, err, tt.err)
			}
			continue
		}
		if err != nil || cfg.Checkpoints.LinkCopyMaxSize != tt.want {
			t.Errorf("user %q, project %q: %v, link copy max size %d, want %d", tt.user, tt.project, err, cfg.Checkpoints.LinkCopyMaxSize, tt.want)
		}
		warned := slices.ContainsFunc(src.Warnings, func(w config.ConfigError) bool { return w.Key == "checkpoints.ignored_link_copy_max_size" })
		if warned != tt.warned {
			t.Errorf("user %q, project %q: warned %v, want %v (%v)", tt.user, tt.project, warned, tt.warned, src.Warnings)
		}
	}
}
