package sandbox

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/shellgate/shellgate/internal/home"
	"github.com/shellgate/shellgate/internal/sandbox/helper"
)

// The session's view of the filesystem is a plan: Plan, a pure function of the
// Spec and of Facts about the host, returns the steps that build it from an
// empty root, and the helper applies them (package helper). Nothing of the
// host is there unless a step puts it there: the system's directories read-only
// (their metadata too: chmod, chown, utime and xattrs fail on a read-only
// mount), a /dev of a few devices and a terminal instance of the session's
// own, an empty /run, private temp dirs, a home directory that shows the
// toolchains and their non-secret settings, the tool caches as copy-on-write
// overlays, and the project root and configured paths writable. `shellgate
// doctor --plan` prints the plan.

// A Step is one piece of the session's view, and StepOp what it does (see
// package helper, which applies them).
type (
	Step   = helper.Step
	StepOp = helper.StepOp
)

// What a Step does; see package helper.
const (
	OpTmpfs    = helper.OpTmpfs
	OpBind     = helper.OpBind
	OpOverlay  = helper.OpOverlay
	OpSymlink  = helper.OpSymlink
	OpFile     = helper.OpFile
	OpDevpts   = helper.OpDevpts
	OpProc     = helper.OpProc
	OpMask     = helper.OpMask
	OpReadOnly = helper.OpReadOnly
)

// WritableDirs are the paths commands may write beneath in a plan: what
// Landlock allows on top of the mounts.
func WritableDirs(steps []Step) []string { return helper.WritableDirs(steps) }

// devices are the host's device nodes the view shows.
var devices = helper.Devices

// Kind is what a host path is.
type Kind uint8

const (
	Absent Kind = iota
	Dir
	File
	Symlink
	Socket
	Other
)

// Host answers the plan's questions about the host's filesystem. It is an
// interface so that the plan can be tested without one.
type Host interface {
	// Lstat says what path is, not following a final symlink; for a symlink,
	// also where it points.
	Lstat(path string) (kind Kind, target string)
	// ReadFile reads a small file (a setting file to scrub); ok is false when
	// it cannot, or when it is too big to be a setting file.
	ReadFile(path string) (data []byte, ok bool)
}

// Facts are what the plan needs to know about the machine.
type Facts struct {
	Host Host
	// Sockets are the pathname sockets listening on the host (the host's
	// /proc/net/unix): daemons a command must not reach even where their
	// directory is visible.
	Sockets []string
	// Private, where the session runs as the host's root, are the files and
	// directories of the system's /etc and /var that only root (or a group)
	// may read (/etc/shadow, /etc/ssl/private): the view shows the system
	// as a user who is not root would see it.
	Private []string
	// AsOthers are the system directories shown as a user who is not root
	// sees them by construction (package idmap: every file owned by nobody),
	// which Private then leaves out.
	AsOthers []string
	// Closed are directories of AsOthers that others may not enter but that
	// hold a path the session needs: the view shows each empty but for
	// those paths.
	Closed []string
}

// systemDirs are the host's top-level directories the view shows, read-only:
// the system's programs, libraries and settings. Anything else at the top
// (home directories, /root, /mnt, /media, /srv, /boot, a data disk) is absent
// unless the Spec names a path in it.
var systemDirs = []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "opt", "var", "nix", "snap", "gnu", "sys"}

// maxHomeTmp bounds what commands write into the session's home (a history
// file, `go env -w`): it is memory, and thrown away with the session.
const maxHomeTmp = 64 << 20

// Plan returns the steps that build the session's view. Every path the Spec
// names is cleaned and absolute.
func Plan(spec Spec, f Facts) []Step {
	p := &planner{spec: spec, f: f}
	p.system()
	for _, c := range f.Closed {
		p.add(Step{Op: OpTmpfs, Path: c, Mode: 0o755, Size: 1 << 20, Why: "others may not enter it: only what the session needs in it"})
	}
	p.temps()
	p.dev()
	p.paths()
	for _, c := range f.Closed {
		p.add(Step{Op: OpReadOnly, Path: c})
	}
	p.masks()
	p.add(Step{Op: OpProc, Path: "/proc", Why: "the session's processes only"})
	// The keyring calls are refused (seccomp), but /proc/keys would still name
	// every key of the user's, as it does on the host.
	p.add(Step{Op: OpMask, Path: "/proc/keys", Try: true, Why: "the names of the user's keys"})
	return p.steps
}

type planner struct {
	spec  Spec
	f     Facts
	steps []Step
}

func (p *planner) add(s Step) { p.steps = append(p.steps, s) }

func (p *planner) kind(path string) (Kind, string) {
	if p.f.Host == nil {
		return Absent, ""
	}
	return p.f.Host.Lstat(path)
}

// system shows the system's directories read-only, and the top-level
// symlinks of a merged /usr as symlinks.
func (p *planner) system() {
	for _, name := range systemDirs {
		path := "/" + name
		switch k, target := p.kind(path); k {
		case Dir:
			if slices.Contains(p.f.AsOthers, path) {
				p.add(Step{Op: OpBind, Path: path, Src: path, AsOthers: true, Why: "system, read-only, every file nobody's: what only root may read is not readable"})
			} else {
				p.add(Step{Op: OpBind, Path: path, Src: path, Why: "system, read-only"})
			}
		case Symlink:
			p.add(Step{Op: OpSymlink, Path: path, Src: target, Why: "system"})
		}
	}
	// /var/run is usually a symlink to /run, which is empty; a directory of its
	// own holds daemons' sockets too.
	if k, _ := p.kind("/var/run"); k == Dir {
		p.add(Step{Op: OpTmpfs, Path: "/var/run", Mode: 0o755, Size: 1 << 20, Why: "daemons' sockets hidden"})
		p.add(Step{Op: OpReadOnly, Path: "/var/run"})
	}
	p.add(Step{Op: OpTmpfs, Path: "/run", Mode: 0o755, Size: 1 << 20, Write: false, Why: "daemons' sockets hidden"})
	if p.spec.Network {
		// With the host's network, names resolve through the host's resolver,
		// whose file may live in /run (systemd-resolved).
		if k, target := p.kind("/etc/resolv.conf"); k == Symlink {
			t := target
			if !filepath.IsAbs(t) {
				t = filepath.Join("/etc", t)
			}
			if t = filepath.Clean(t); under(t, "/run") {
				p.add(Step{Op: OpBind, Path: t, Src: t, Try: true, Why: "the host's resolver settings"})
			}
		}
	}
	p.add(Step{Op: OpReadOnly, Path: "/run"})
}

// temps gives the session its own /tmp, /var/tmp and /dev/shm.
func (p *planner) temps() {
	size := p.spec.TmpSize
	if size <= 0 {
		size = DefaultTmpSize
	}
	p.add(Step{Op: OpTmpfs, Path: "/tmp", Mode: 0o1777, Size: size, Write: true, Why: "the session's own"})
	if k, _ := p.kind("/var/tmp"); k == Dir {
		p.add(Step{Op: OpTmpfs, Path: "/var/tmp", Mode: 0o1777, Size: size, Write: true, Why: "the session's own"})
	}
}

// dev builds a /dev of a few devices, a terminal instance of the session's own
// and the fd links: no disk, console, serial port or other user's terminal.
func (p *planner) dev() {
	p.add(Step{Op: OpTmpfs, Path: "/dev", Mode: 0o755, Size: 1 << 20, Write: true, Why: "a few devices, nothing else of the host's"})
	for _, d := range devices {
		p.add(Step{Op: OpBind, Path: d, Src: d, Write: true, Why: "device"})
	}
	p.add(Step{Op: OpDevpts, Path: "/dev/pts", Why: "terminals of the session's own"})
	p.add(Step{Op: OpSymlink, Path: "/dev/ptmx", Src: "pts/ptmx"})
	for i, name := range []string{"stdin", "stdout", "stderr"} {
		p.add(Step{Op: OpSymlink, Path: "/dev/" + name, Src: "/proc/self/fd/" + strconv.Itoa(i)})
	}
	p.add(Step{Op: OpSymlink, Path: "/dev/fd", Src: "/proc/self/fd"})
	size := p.spec.TmpSize
	if size <= 0 {
		size = DefaultTmpSize
	}
	p.add(Step{Op: OpTmpfs, Path: "/dev/shm", Mode: 0o1777, Size: size, Write: true, Why: "the session's own"})
	p.add(Step{Op: OpReadOnly, Path: "/dev"})
}

// home builds the user's home from nothing: a private, writable tmpfs
// showing the toolchains' installs read-only, their settings with the
// credentials taken out, and the tool caches. Where the project root is the
// home itself (or holds it), the home is the project's, and only the secrets
// Spec.Hidden names are hidden.
func (p *planner) home() {
	homeDir := p.spec.Home
	p.add(Step{Op: OpTmpfs, Path: homeDir, Mode: 0o700, Size: maxHomeTmp, Write: true, Why: "the user's home, built from what toolchains need"})
	var dirs []string // what the user's git config names in the home
	for _, e := range home.Entries() {
		path := filepath.Join(homeDir, e.Rel)
		k, _ := p.kind(path)
		if k == Absent {
			continue
		}
		switch {
		case e.Scrub && k != Dir:
			data, ok := p.f.Host.ReadFile(path)
			if !ok {
				continue
			}
			data = home.Show(e.Rel, data)
			p.add(Step{Op: OpFile, Path: path, Data: data, Why: e.Why})
			if strings.Contains(e.Rel, "git") {
				dirs = append(dirs, home.GitDirs(data, homeDir)...)
			}
		case !e.Scrub:
			p.add(Step{Op: OpBind, Path: path, Src: path, Why: e.Why})
		}
	}
	for _, d := range dirs {
		if k, _ := p.kind(d); k == Dir && !p.shown(d) {
			p.add(Step{Op: OpBind, Path: d, Src: d, Why: "named by the user's git config, read-only"})
		}
	}
}

// paths shows the home, the caches as overlays, and the writable and visible
// paths, shallowest first, so that a path inside another is mounted over it.
func (p *planner) paths() {
	type item struct {
		path, why string
		op        StepOp
		write     bool
	}
	var items []item
	if h := p.spec.Home; h != "" && h != "/" && !p.writable(h) {
		items = append(items, item{path: h, op: OpTmpfs})
	}
	for i, w := range p.spec.Writable {
		why := "writable"
		if i == 0 {
			why = "the project root"
		}
		items = append(items, item{w, why, OpBind, true})
	}
	for _, c := range p.spec.Caches {
		if p.writable(c) {
			continue
		}
		items = append(items, item{c, "tool cache", OpOverlay, true})
	}
	for _, v := range p.spec.Visible {
		if !p.writable(v) {
			items = append(items, item{v, "visible", OpBind, false})
		}
	}
	slices.SortStableFunc(items, func(a, b item) int {
		return strings.Count(a.path, "/") - strings.Count(b.path, "/")
	})
	for _, it := range items {
		k, _ := p.kind(it.path)
		switch {
		case it.op == OpTmpfs:
			p.home()
		case it.op == OpOverlay && p.spec.CacheStore == "":
			p.add(Step{Op: OpBind, Path: it.path, Src: it.path, Write: true, Try: true, Why: it.why + ", writable: no store for copies"})
		case it.op == OpOverlay && k != Dir:
			p.add(Step{Op: OpOverlay, Path: it.path, Upper: p.cacheLayer(it.path), Write: true,
				Why: it.why + ": this project's own, kept between sessions (none on the host)"})
		case it.op == OpOverlay:
			p.add(Step{Op: OpOverlay, Path: it.path, Src: it.path, Upper: p.cacheLayer(it.path), Write: true,
				Why: it.why + ": writes land in this project's copy, the host's stays as it is"})
		case k == Absent || !it.write && p.shown(it.path):
			continue
		default:
			p.add(Step{Op: it.op, Path: it.path, Src: it.path, Write: it.write, Why: it.why})
		}
	}
}

// cacheLayer is where the project's copy of a cache is kept.
func (p *planner) cacheLayer(cache string) string {
	name := strings.ReplaceAll(strings.TrimPrefix(cache, "/"), "/", "%")
	return filepath.Join(p.spec.CacheStore, name)
}

// writable reports whether path lies in one of the writable paths.
func (p *planner) writable(path string) bool {
	return slices.ContainsFunc(p.spec.Writable, func(w string) bool { return under(path, w) })
}

// shown reports whether the host's path is visible in the plan so far, and
// not inside something the session writes to anyway.
func (p *planner) shown(path string) bool {
	for i := len(p.steps) - 1; i >= 0; i-- {
		s := p.steps[i]
		if !under(path, s.Path) {
			continue
		}
		return s.Op == OpBind || s.Op == OpOverlay
	}
	return false
}

// masks hide the host's listening sockets wherever the view shows their
// directory, the project's own included (a host process listens there: a
// session's sockets are made later, in its own network namespace), and the
// secrets Spec.Hidden names where the view shows them (a
// home that is the project root).
func (p *planner) masks() {
	var masked []string
	for _, s := range p.f.Sockets {
		if p.shown(s) && !slices.Contains(masked, s) {
			masked = append(masked, s)
			p.add(Step{Op: OpMask, Path: s, Try: true, Why: "a host daemon's socket"})
		}
	}
	// What the work needs is never masked: a project (or a path shown on
	// purpose) inside a private directory, as a root user's /var/tmp/proj
	// may be.
	needed := func(h string) bool {
		return slices.ContainsFunc(append(slices.Clone(p.spec.Writable), p.spec.Visible...), func(w string) bool { return under(w, h) || under(h, w) })
	}
	for _, h := range p.f.Private {
		if p.shown(h) && !needed(h) && !slices.Contains(masked, h) {
			masked = append(masked, h)
			p.add(Step{Op: OpMask, Path: h, Try: true, Why: "readable by root alone"})
		}
	}
	for _, h := range p.spec.Hidden {
		if k, _ := p.kind(h); k != Absent && p.shown(h) && !slices.Contains(masked, h) {
			masked = append(masked, h)
			p.add(Step{Op: OpMask, Path: h, Try: true, Why: "secret"})
		}
	}
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}
