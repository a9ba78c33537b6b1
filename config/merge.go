package config

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/policy"
)

// Bounds on limits. Timeouts follow seed 001 (timeout_ms between 1 and 600000).
const (
	minTimeout      = time.Millisecond
	maxKillGrace    = 2 * time.Second
	minOutputLimit  = 256
	maxOutputLimit  = 64 << 20 // kept in memory and sent to a model: 64 MiB is already absurd
	minSpillMax     = 1 << 10
	maxSpillMax     = 1 << 40
	maxRetention    = 365 * 24 * time.Hour
	maxPatternBytes = 4096
)

// merger folds files, one layer at a time, into a Config.
type merger struct {
	cfg  shellgate.Config
	home string
	src  *Sources

	// Where the timeouts were last set, to blame the right line when they conflict.
	defaultTimeoutAt, maxTimeoutAt *parsedFile
}

// modeRank orders approval modes from laxest to strictest.
var modeRank = map[policy.Mode]int{"": 0, policy.ModeAuto: 0, policy.ModeUntrusted: 1, policy.ModeNever: 2}

// apply merges one file. An untrusted file's loosening settings are skipped with a warning.
func (m *merger) apply(f *parsedFile, trusted bool) error {
	c := &f.cfg
	dir := filepath.Dir(f.abs)
	ignore := func(key, why string) {
		table, name := splitKey(key)
		where := name
		if table != "" {
			where = "[" + table + "] " + name
		}
		m.src.Warnings = append(m.src.Warnings, ConfigError{File: f.path, Line: f.keys.line(key), Key: key,
			Msg: where + " ignored: " + why + "; a project file may only tighten policy unless the user config sets trust_project_config = true"})
	}

	if c.Shell != nil {
		shell, err := m.shell(f, *c.Shell, dir)
		if err != nil {
			return err
		}
		if trusted {
			m.cfg.Shell = shell
		} else {
			ignore("shell", "it chooses the program that runs every command")
		}
	}
	if err := m.limits(f, trusted, dir, ignore); err != nil {
		return err
	}
	if err := m.env(f, trusted, ignore); err != nil {
		return err
	}
	if err := m.secrets(f, trusted, ignore); err != nil {
		return err
	}
	if err := m.sandbox(f, trusted, ignore); err != nil {
		return err
	}
	if err := m.network(f, trusted, ignore); err != nil {
		return err
	}
	if err := m.audit(f, trusted, dir, ignore); err != nil {
		return err
	}
	if err := m.session(f, trusted, ignore); err != nil {
		return err
	}
	if err := m.checkpoints(f, trusted, dir, ignore); err != nil {
		return err
	}
	return m.policy(f, trusted, dir, ignore)
}

func (m *merger) shell(f *parsedFile, s, dir string) (string, error) {
	if strings.TrimSpace(s) == "" || strings.ContainsRune(s, 0) {
		return "", f.errorAt("shell", "want a shell name such as \"bash\" or a path, got %q", s)
	}
	// A name is looked up in PATH later; a relative path is relative to the file.
	if strings.ContainsAny(s, `/\`) {
		return resolvePath(s, dir, m.home)
	}
	return s, nil
}

func (m *merger) limits(f *parsedFile, trusted bool, dir string, ignore func(key, why string)) error {
	l := &f.cfg.Limits
	durations := []struct {
		key      string
		val      *string
		dst      *time.Duration
		min, max time.Duration
	}{
		{"limits.default_timeout", l.DefaultTimeout, &m.cfg.DefaultTimeout, minTimeout, shellgate.MaxTimeout},
		{"limits.max_timeout", l.MaxTimeout, &m.cfg.MaxTimeout, minTimeout, shellgate.MaxTimeout},
		{"limits.kill_grace", l.KillGrace, &m.cfg.KillGrace, 0, maxKillGrace},
		{"limits.spill_retention", l.SpillRetention, &m.cfg.SpillRetention, time.Second, maxRetention},
	}
	for _, d := range durations {
		if d.val == nil {
			continue
		}
		v, err := parseDuration(*d.val)
		if err != nil {
			return f.errorAt(d.key, "%v", err)
		}
		if v < d.min || v > d.max {
			return f.errorAt(d.key, "%s is out of range: want %s to %s", envelope.Duration(v), envelope.Duration(d.min), envelope.Duration(d.max))
		}
		if !trusted && v > *d.dst {
			ignore(d.key, "raising it from "+envelope.Duration(*d.dst)+" loosens policy")
			continue
		}
		*d.dst = v
	}
	if l.DefaultTimeout != nil {
		m.defaultTimeoutAt = f
	}
	if l.MaxTimeout != nil {
		m.maxTimeoutAt = f
	}

	for _, o := range []struct {
		key string
		val any
		dst *int
	}{{"limits.output_limit", l.OutputLimit, &m.cfg.OutputLimit}, {"limits.max_output_limit", l.MaxOutputLimit, &m.cfg.MaxOutputLimit}} {
		if o.val == nil {
			continue
		}
		n, err := parseSize(o.val)
		if err != nil {
			return f.errorAt(o.key, "%v", err)
		}
		if n < minOutputLimit || n > maxOutputLimit {
			return f.errorAt(o.key, "%d bytes is out of range: want %d bytes to %dMB", n, minOutputLimit, maxOutputLimit>>20)
		}
		if !trusted && int(n) > *o.dst && *o.dst > 0 {
			ignore(o.key, fmt.Sprintf("raising it from %d bytes loosens policy", *o.dst))
		} else {
			*o.dst = int(n)
		}
	}
	for _, o := range []struct {
		key string
		v   any
		dst *int64
	}{{"limits.spill_max", l.SpillMax, &m.cfg.SpillMax}, {"limits.spill_total", l.SpillTotal, &m.cfg.SpillTotal}} {
		if o.v == nil {
			continue
		}
		n, err := parseSize(o.v)
		if err != nil {
			return f.errorAt(o.key, "%v", err)
		}
		if n < minSpillMax || n > maxSpillMax {
			return f.errorAt(o.key, "%d bytes is out of range: want 1KB to 1TB", n)
		}
		if !trusted && n > *o.dst {
			ignore(o.key, fmt.Sprintf("raising it from %d bytes loosens policy", *o.dst))
		} else {
			*o.dst = n
		}
	}
	if l.SpillDir != nil {
		p, err := resolvePath(*l.SpillDir, dir, m.home)
		if err != nil {
			return f.errorAt("limits.spill_dir", "%v", err)
		}
		if trusted {
			m.cfg.SpillDir = p
		} else {
			ignore("limits.spill_dir", "it makes shellgate write files wherever it points")
		}
	}
	return nil
}

func (m *merger) env(f *parsedFile, trusted bool, ignore func(key, why string)) error {
	for _, name := range slices.Sorted(maps.Keys(f.cfg.Env)) {
		key := "env." + name
		if !validEnvName(name) {
			return f.errorAt(key, "not a valid environment variable name (letters, digits and _, not starting with a digit)")
		}
		val := f.cfg.Env[name]
		if strings.ContainsRune(val, 0) {
			return f.errorAt(key, "value contains a NUL byte")
		}
		if !trusted {
			ignore(key, "environment variables can change what commands run")
			continue
		}
		if m.cfg.Env == nil {
			m.cfg.Env = map[string]string{}
		}
		m.cfg.Env[name] = val
	}
	return nil
}

func (m *merger) secrets(f *parsedFile, trusted bool, ignore func(key, why string)) error {
	s := &f.cfg.Secrets
	for i, name := range s.Keep {
		if !validEnvName(name) {
			return f.errorAt("secrets.keep", "entry %d, %q, is not a valid environment variable name", i+1, name)
		}
	}
	if len(s.Keep) > 0 {
		if trusted {
			m.cfg.KeepEnv = appendNew(m.cfg.KeepEnv, s.Keep...)
		} else {
			ignore("secrets.keep", "it passes secrets to commands")
		}
	}
	if s.Strip != nil {
		switch {
		case *s.Strip:
			m.cfg.KeepSecrets = false // stricter: always allowed
		case trusted:
			m.cfg.KeepSecrets = true
		default:
			ignore("secrets.strip", "it passes secrets to commands")
		}
	}
	return nil
}

func (m *merger) policy(f *parsedFile, trusted bool, dir string, ignore func(key, why string)) error {
	p := &f.cfg.Policy
	out := &m.cfg.Policy
	if p.Mode != nil {
		mode := policy.Mode(*p.Mode)
		rank, ok := modeRank[mode]
		if !ok || mode == "" {
			return f.errorAt("policy.mode", "unknown approval mode %q; want \"auto\", \"untrusted\" or \"never\"", *p.Mode)
		}
		if trusted || rank >= modeRank[out.Mode] {
			out.Mode = mode
		} else {
			ignore("policy.mode", fmt.Sprintf("%q is laxer than %q", mode, modeOrAuto(out.Mode)))
		}
	}
	if p.Network != nil {
		if trusted || !*p.Network {
			out.Network = *p.Network
		} else {
			ignore("policy.network", "it lets commands reach the network")
		}
	}
	if p.DedicatedTools != nil {
		if trusted || *p.DedicatedTools {
			out.DedicatedTools = *p.DedicatedTools
		} else {
			ignore("policy.dedicated_tools", "it lifts a restriction")
		}
	}

	lists := []struct {
		key   string
		vals  []string
		dst   *[]string
		loose string // why an untrusted file may not add to it; "" if it may
	}{
		{"policy.deny", p.Deny, &out.Deny, ""},
		{"policy.ask", p.Ask, &out.Ask, ""},
		{"policy.allow", p.Allow, &out.Allow, "allow patterns loosen policy"},
		{"policy.relax", p.Relax, &out.Relax, "it switches off built-in rules"},
	}
	for _, l := range lists {
		for i, v := range l.vals {
			if err := checkEntry(l.key, v); err != nil {
				return f.errorAt(l.key, "entry %d, %q: %v", i+1, v, err)
			}
		}
		if len(l.vals) == 0 {
			continue
		}
		if !trusted && l.loose != "" {
			ignore(l.key, l.loose)
			continue
		}
		*l.dst = appendNew(*l.dst, l.vals...)
	}

	if len(p.Writable) > 0 {
		var paths []string
		for i, w := range p.Writable {
			abs, err := resolvePath(w, dir, m.home)
			if err != nil {
				return f.errorAt("policy.writable", "entry %d: %v", i+1, err)
			}
			paths = append(paths, abs)
		}
		if trusted {
			out.WritablePaths = appendNew(out.WritablePaths, paths...)
		} else {
			ignore("policy.writable", "it lets commands write outside the project")
		}
	}
	return nil
}

// finish checks what only the merged result can tell.
func (m *merger) finish() error {
	if m.cfg.DefaultTimeout <= m.cfg.MaxTimeout {
		return nil
	}
	switch {
	case m.defaultTimeoutAt == nil:
		// Only max_timeout was lowered: the built-in default follows it down.
		m.cfg.DefaultTimeout = m.cfg.MaxTimeout
		return nil
	case m.maxTimeoutAt == nil || m.defaultTimeoutAt == m.maxTimeoutAt:
		return m.defaultTimeoutAt.errorAt("limits.default_timeout", "%s is more than max_timeout (%s)", envelope.Duration(m.cfg.DefaultTimeout), envelope.Duration(m.cfg.MaxTimeout))
	default:
		return m.defaultTimeoutAt.errorAt("limits.default_timeout", "%s is more than max_timeout (%s, set in %s)",
			envelope.Duration(m.cfg.DefaultTimeout), envelope.Duration(m.cfg.MaxTimeout), m.maxTimeoutAt.path)
	}
}

// checkEntry validates one entry of a policy list on its own, so that an error can name
// its line: relax names against the built-in rules, patterns by compiling them.
func checkEntry(key, v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return fmt.Errorf("empty %s", entryWord(key))
	case len(v) > maxPatternBytes:
		return fmt.Errorf("longer than %d bytes", maxPatternBytes)
	case strings.ContainsRune(v, 0):
		return fmt.Errorf("contains a NUL byte")
	}
	var s policy.Settings
	switch key {
	case "policy.relax":
		if !slices.Contains(ruleIDs(), v) {
			return fmt.Errorf("no built-in rule has this name; the rules are %s", strings.Join(ruleIDs(), ", "))
		}
		s.Relax = []string{v}
	case "policy.allow":
		s.Allow = []string{v}
	case "policy.ask":
		s.Ask = []string{v}
	default:
		s.Deny = []string{v}
	}
	if _, err := policy.New(s); err != nil {
		return err
	}
	return nil
}

func entryWord(key string) string {
	if key == "policy.relax" {
		return "rule name"
	}
	return "pattern"
}

func ruleIDs() []string {
	var ids []string
	for _, r := range policy.Rules() {
		ids = append(ids, r.ID)
	}
	return ids
}

func modeOrAuto(m policy.Mode) policy.Mode {
	if m == "" {
		return policy.ModeAuto
	}
	return m
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z':
		case '0' <= r && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// appendNew appends the values not already in list, keeping order.
func appendNew(list []string, vals ...string) []string {
	for _, v := range vals {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}
