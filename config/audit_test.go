package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/config"
)

// [audit]: the user file sets it; a project file may not turn the log off, move
// it, or make it keep less, unless the user trusts it.
func TestAuditTable(t *testing.T) {
	l := newLab(t)
	write(t, l.user, "[audit]\npath = \"~/logs/audit.jsonl\"\nmax_size = \"2MB\"\nkeep = 5\n")
	project := write(t, filepath.Join(l.root, config.ProjectFileName), `[audit]
enabled = false
path = "/tmp/elsewhere.jsonl"
max_size = "1KB"
keep = 1
`)
	cfg, src, err := config.Load(l.opts())
	if err != nil {
		t.Fatal(err)
	}
	want := shellgate.AuditConfig{Path: filepath.Join(l.home, "logs", "audit.jsonl"), MaxBytes: 2 << 20, Keep: 5}
	if a := cfg.Audit; a.Off != want.Off || a.Path != want.Path || a.MaxBytes != want.MaxBytes || a.Keep != want.Keep {
		t.Errorf("audit %+v, want %+v", a, want)
	}
	warned := map[string]int{}
	for _, w := range src.Warnings {
		warned[w.Key] = w.Line
	}
	for key, line := range map[string]int{"audit.enabled": 2, "audit.path": 3, "audit.max_size": 4, "audit.keep": 5} {
		if warned[key] != line {
			t.Errorf("no warning for %s at %s:%d: %v", key, project, line, src.Warnings)
		}
	}

	// What keeps more is fine from anywhere; trusted, anything goes.
	write(t, project, "[audit]\nenabled = true\nmax_size = \"4MB\"\nkeep = 9\n")
	if cfg, src, err = config.Load(l.opts()); err != nil || cfg.Audit.MaxBytes != 4<<20 || cfg.Audit.Keep != 9 || len(src.Warnings) != 0 {
		t.Errorf("raising: %v %+v %v", err, cfg.Audit, src.Warnings)
	}
	write(t, project, "[audit]\nenabled = false\npath = \"log.jsonl\"\n")
	opts := l.opts()
	opts.TrustProject = true
	if cfg, _, err = config.Load(opts); err != nil || !cfg.Audit.Off || cfg.Audit.Path != filepath.Join(l.root, "log.jsonl") {
		t.Errorf("trusted: %v %+v", err, cfg.Audit)
	}
	write(t, l.user, "[audit]\nenabled = false\n")
	write(t, project, "")
	if cfg, _, err = config.Load(l.opts()); err != nil || !cfg.Audit.Off {
		t.Errorf("the user turning it off: %v %+v", err, cfg.Audit)
	}
}

func TestAuditTableErrors(t *testing.T) {
	tests := []struct{ file, want string }{
		{"[audit]\nenabld = true\n", `:2: unknown key "enabld" in [audit]; did you mean "enabled"?`},
		{"[audit]\nmax_size = \"12\"\n", `:2: [audit] max_size: 12 bytes is out of range: want 1KB to 1GB`},
		{"[audit]\nmax_size = \"2GB\"\n", `[audit] max_size: 2147483648 bytes is out of range`},
		{"[audit]\nmax_size = \"big\"\n", `[audit] max_size: "big" is not a size`},
		{"[audit]\nkeep = 0\n", `:2: [audit] keep: 0 is out of range: want 1 to 100`},
		{"[audit]\nenabled = \"no\"\n", `[audit] enabled: want true or false`},
		{"[audit]\npath = 3\n", `[audit] path: want a string`},
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
