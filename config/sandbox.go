package config

import (
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/shellgate/shellgate/internal/sandbox"
)

// sandboxTable is [sandbox]: how the kernel confines commands.
type sandboxTable struct {
	Mode     *string  `toml:"mode"`    // auto, on, off
	Profile  *string  `toml:"profile"` // read-only, workspace-write, full-access
	Hide     []string `toml:"hide"`    // more secret paths, "~/…" or absolute
	Protect  []string `toml:"protect"` // more read-only paths in the root, relative to it
	Visible  []string `toml:"visible"` // more paths commands see read-only, "~/…" or absolute
	Caches   *bool    `toml:"caches"`  // tool caches writable (default true)
	TmpSize  any      `toml:"tmp_size"`
	Procs    *int64   `toml:"procs"`
	Memory   any      `toml:"memory"`
	FileSize any      `toml:"file_size"`
	CPUTime  *string  `toml:"cpu_time"`
	// HostPorts are host loopback ports forwarded into a session whose
	// network is off (a dev server, a database).
	HostPorts []int64 `toml:"host_ports"`
}

// Ranks: a project file may move towards the stricter end only.
var (
	sandboxModeRank    = map[sandbox.Mode]int{sandbox.Off: 0, sandbox.Auto: 1, sandbox.On: 2}
	sandboxProfileRank = map[sandbox.Profile]int{sandbox.FullAccess: 0, sandbox.WorkspaceWrite: 1, sandbox.ReadOnly: 2}
)

func (m *merger) sandbox(f *parsedFile, trusted bool, ignore func(key, why string)) error {
	for _, part := range []func(*parsedFile, bool, func(key, why string)) error{m.sandboxLevels, m.sandboxPaths, m.sandboxLimits} {
		if err := part(f, trusted, ignore); err != nil {
			return err
		}
	}
	return m.hostPorts(f, f.cfg.Sandbox.HostPorts, trusted, ignore)
}

// sandboxLevels merges the mode and the profile: a project file may only
// strengthen them.
func (m *merger) sandboxLevels(f *parsedFile, trusted bool, ignore func(key, why string)) error {
	s := &f.cfg.Sandbox
	out := &m.cfg.Sandbox
	if s.Mode != nil {
		mode, err := sandbox.ParseMode(*s.Mode)
		if err != nil || *s.Mode == "" {
			return f.errorAt("sandbox.mode", "unknown mode %q; want \"auto\", \"on\" or \"off\"", *s.Mode)
		}
		cur, _ := sandbox.ParseMode(string(out.Mode))
		if trusted || sandboxModeRank[mode] >= sandboxModeRank[cur] {
			out.Mode = mode
		} else {
			ignore("sandbox.mode", "it weakens the sandbox")
		}
	}
	if s.Profile != nil {
		p, err := sandbox.ParseProfile(*s.Profile)
		if err != nil || *s.Profile == "" {
			return f.errorAt("sandbox.profile", "unknown profile %q; want \"read-only\", \"workspace-write\" or \"full-access\"", *s.Profile)
		}
		cur, _ := sandbox.ParseProfile(string(out.Profile))
		if trusted || sandboxProfileRank[p] >= sandboxProfileRank[cur] {
			out.Profile = p
		} else {
			ignore("sandbox.profile", "it weakens the sandbox")
		}
	}
	return nil
}

// sandboxPaths merges hide, protect, visible and caches: a project file may
// hide and protect more, not show more.
func (m *merger) sandboxPaths(f *parsedFile, trusted bool, ignore func(key, why string)) error {
	s := &f.cfg.Sandbox
	out := &m.cfg.Sandbox
	for i, h := range s.Hide {
		if !strings.HasPrefix(h, "~/") && !filepath.IsAbs(h) {
			return f.errorAt("sandbox.hide", "entry %d, %q: want an absolute path or one starting with ~/", i+1, h)
		}
	}
	out.Hide = appendNew(out.Hide, s.Hide...) // hiding more is always allowed
	for i, p := range s.Protect {
		if filepath.IsAbs(p) || strings.HasPrefix(filepath.Clean(p), "..") {
			return f.errorAt("sandbox.protect", "entry %d, %q: want a path relative to the project root, inside it", i+1, p)
		}
	}
	out.Protect = appendNew(out.Protect, s.Protect...)
	for i, v := range s.Visible {
		if !strings.HasPrefix(v, "~/") && !filepath.IsAbs(v) {
			return f.errorAt("sandbox.visible", "entry %d, %q: want an absolute path or one starting with ~/", i+1, v)
		}
	}
	if len(s.Visible) > 0 {
		if trusted {
			out.Visible = appendNew(out.Visible, s.Visible...)
		} else {
			ignore("sandbox.visible", "it shows commands more of the machine")
		}
	}
	if s.Caches != nil {
		if trusted || !*s.Caches {
			out.NoCaches = !*s.Caches
		} else {
			ignore("sandbox.caches", "it makes more of the home directory writable")
		}
	}
	return nil
}

// sandboxLimits merges the sizes, processes and CPU time: a project file may
// only lower them.
func (m *merger) sandboxLimits(f *parsedFile, trusted bool, ignore func(key, why string)) error {
	s := &f.cfg.Sandbox
	out := &m.cfg.Sandbox
	lower := func(key string, cur, v int64) (int64, bool) {
		if trusted || cur == 0 || (v > 0 && v <= cur) {
			return v, true
		}
		ignore(key, "it raises a limit")
		return cur, false
	}
	sizes := []struct {
		key string
		val any
		dst *int64
	}{
		{"sandbox.tmp_size", s.TmpSize, &out.TmpSize},
		{"sandbox.memory", s.Memory, &out.Limits.Memory},
		{"sandbox.file_size", s.FileSize, &out.Limits.FileSize},
	}
	for _, sz := range sizes {
		if sz.val == nil {
			continue
		}
		v, err := parseSize(sz.val)
		if err != nil || v <= 0 {
			return f.errorAt(sz.key, "want a size such as \"2GB\" or a number of bytes, got %v", sz.val)
		}
		*sz.dst, _ = lower(sz.key, *sz.dst, v)
	}
	if s.Procs != nil {
		if *s.Procs < 16 || *s.Procs > 1<<22 {
			return f.errorAt("sandbox.procs", "%d is out of range: want 16 to %d", *s.Procs, 1<<22)
		}
		v, _ := lower("sandbox.procs", int64(out.Limits.Procs), *s.Procs)
		out.Limits.Procs = int(v)
	}
	if s.CPUTime != nil {
		d, err := parseDuration(*s.CPUTime)
		if err != nil || d <= 0 {
			return f.errorAt("sandbox.cpu_time", "want a duration such as \"10m\", got %q", *s.CPUTime)
		}
		v, _ := lower("sandbox.cpu_time", int64(out.Limits.CPUTime), int64(d))
		out.Limits.CPUTime = time.Duration(v)
	}
	return nil
}

// hostPorts adds [sandbox] host_ports. Each port forwarded lets commands reach
// one more of the host's servers, so a project file may not add any.
func (m *merger) hostPorts(f *parsedFile, ports []int64, trusted bool, ignore func(key, why string)) error {
	out := &m.cfg.Sandbox
	var add []int
	for i, p := range ports {
		if p < 1 || p > 65535 {
			return f.errorAt("sandbox.host_ports", "entry %d, %d: want a TCP port, 1 to 65535", i+1, p)
		}
		if !slices.Contains(out.HostPorts, int(p)) && !slices.Contains(add, int(p)) {
			add = append(add, int(p))
		}
	}
	if len(add) == 0 {
		return nil
	}
	if !trusted {
		ignore("sandbox.host_ports", "forwarding a host port lets commands reach the host's servers")
		return nil
	}
	if len(out.HostPorts)+len(add) > sandbox.MaxHostPorts {
		return f.errorAt("sandbox.host_ports", "%d ports in all: at most %d can be forwarded", len(out.HostPorts)+len(add), sandbox.MaxHostPorts)
	}
	out.HostPorts = append(out.HostPorts, add...)
	return nil
}
