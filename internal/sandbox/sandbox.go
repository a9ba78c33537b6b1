// Package sandbox confines the commands shellgate runs with the kernel, so that
// what the policy lets through still cannot reach outside the project.
//
// On Linux a Session is a set of namespaces — user, mount, PID, IPC and, with the
// network off, network — held by a helper process that is PID 1 of the session
// and starts every command of it. Its view of the files is built on an empty
// root from a plan (Plan): the system read-only, a home showing only what
// toolchains need (credentials absent), the project root and the configured
// paths writable and nothing else (Landlock too), protected paths in the root
// read-only; /tmp and /dev/shm are the session's own; /proc shows only the
// session; the network is a loopback of the session's own. Commands of one session share
// all of it, so a server started in the background answers the next command on
// localhost. When the helper dies — Close, or shellgate itself killed with
// SIGKILL — the kernel kills every process of the session. Commands start from
// one thread of the helper, the only one without capabilities and under
// Landlock; the others bind the protected paths that commands create read-only
// as each command ends.
//
// The helper is this same executable started again: the init function of
// package helper (internal/sandbox/helper, which holds everything that runs
// inside the session) recognises it by its argv[0] and never returns. Any
// program that imports the package (through package shellgate) can therefore
// sandbox without a separate binary; it must not be started with that argv[0]
// for other uses.
//
// Where the kernel makes no user namespace (a container with Docker's default
// seccomp profile), a Linux Session is bare instead: each command is started
// through package confine's wrapper, which restricts itself with what needs
// no namespace — Landlock, the seccomp filter, no capabilities — before it
// executes the command; Report says what is missing (bare_linux.go).
//
// On macOS a Session is a Seatbelt profile (package internal/seatbelt) that sandbox-exec
// applies to each command; on Windows, a job object that kills the commands'
// processes when it closes and holds the limits, and confines nothing else.
// Report says, per system, what is missing. Elsewhere Start reports
// ErrUnsupported and commands run unconfined, which the report says.
package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/shellgate/shellgate/internal/sandbox/helper"
	"github.com/shellgate/shellgate/internal/seatbelt"
)

// Mode says how much confinement a Gate insists on.
type Mode string

const (
	// Auto applies every layer the kernel offers and reports those it lacks.
	Auto Mode = "auto"
	// On refuses to run a command when any layer is missing.
	On Mode = "on"
	// Off runs commands unconfined (the policy still applies).
	Off Mode = "off"
)

// ParseMode checks a mode name; "" is Auto.
func ParseMode(s string) (Mode, error) { return parseName("mode", s, Auto, Auto, On, Off) }

// Profile is what a session may change (seed 000's per-agent permissions).
type Profile string

const (
	// ReadOnly: nothing writable but the session's temp dirs; network off.
	ReadOnly Profile = "read-only"
	// WorkspaceWrite: the project root, the temp dirs, tool caches and the
	// configured writable paths (the default).
	WorkspaceWrite Profile = "workspace-write"
	// FullAccess: no sandbox; the policy still applies.
	FullAccess Profile = "full-access"
)

// ParseProfile checks a profile name; "" is WorkspaceWrite.
func ParseProfile(s string) (Profile, error) {
	return parseName("profile", s, WorkspaceWrite, ReadOnly, WorkspaceWrite, FullAccess)
}

// parseName checks the name s of a setting (what) against names; "" is def.
func parseName[T ~string](what, s string, def T, names ...T) (T, error) {
	if s == "" {
		return def, nil
	}
	if slices.Contains(names, T(s)) {
		return T(s), nil
	}
	want := make([]string, len(names))
	for i, n := range names {
		want[i] = string(n)
	}
	last := len(want) - 1
	return "", fmt.Errorf("sandbox %s %q: want %s or %s", what, s, strings.Join(want[:last], ", "), want[last])
}

// Spec is what one session confines its commands to. Paths are absolute.
type Spec struct {
	// OneShot: the session is for one command (`shellgate run`). On Linux
	// its helper exits once a command's end leaves the session with nothing
	// for its end to do (no process left, nothing untold), so that the
	// kernel's end of its namespaces runs beside the rest of the run rather
	// than after its Close; a command after that starts a new session.
	OneShot bool `json:",omitempty"`
	// Writable paths: the project root first, then caches and configured paths;
	// directories or single files. Paths that do not exist are skipped.
	Writable []string
	// Protected paths stay read-only even inside a writable one (.git/hooks,
	// .git/config, .vscode, …). On Linux a path that does not exist yet is
	// protected (or quarantined, see Quarantine) once a command that created it
	// ends (Launched's Notes say so), or when the next command starts; while it
	// is being created only the policy guards it.
	Protected []string
	// GitDirs are directories outside the root that git on the host reads
	// for the root and the session may write, the root's own git directory
	// first (a linked worktree's; then the refs and reflogs it shares):
	// symlinks there are removed as in the root's .git, and the first is
	// tracked as the root's .git is (see gitstate).
	GitDirs []string
	// Patterns are names of protected entries of the first writable path
	// (the root), such as "*.code-workspace": protected like Protected.
	Patterns []string
	// Quarantine, when set (a directory in the root), is where a protected path
	// that appears while the session runs is moved, instead of being made
	// read-only where it is — unless the command that created it was started
	// with KeepCreated in its environment (the user approved it). A command
	// could write anything there before the sandbox could protect it, and
	// what it wrote would run later outside any check. git init's config,
	// hooks and info go too: git works without them.
	Quarantine string
	// QuarantineLog, when set, is shellgate's log (see internal/quarantinelog)
	// of what the session moves into the quarantine when it ends, where no
	// envelope tells it: the helper appends to it through a descriptor, and
	// the next session in the root reports it.
	QuarantineLog string
	// StoreLinks, when set, is the checkpoint store's directory of links
	// (package checkpoint keeps a big ignored file of the root by a hard
	// link there): copy-up writes a file over LinkCopyMax bytes whose only
	// other name is there in place instead of copying it first (see
	// copyup.Opener.SetStoreLinks). The helper holds a descriptor of it.
	StoreLinks  string
	LinkCopyMax int64
	// Caches are the tool caches builds write to (Go's, npm's, pip's …):
	// commands write to a copy of the project's own over each (see CacheStore),
	// never to the host's, which a host program reads and runs later.
	Caches []string
	// MakeCaches are the caches of Caches a session without a view (a bare
	// one, writing to the host's caches in place) makes if missing, as their
	// tool would (Go's), so that its Landlock rules can grant them.
	MakeCaches []string
	// CacheStore is the project's host directory (of shellgate's) where those
	// copies are kept between sessions (see internal/cachestore). Empty: the
	// caches are writable as they are.
	CacheStore string
	// Hidden paths read as empty where the view shows them anyway: secret files
	// and directories (~/.ssh, …) in a home that is the project root. Elsewhere
	// the view shows nothing of the home that toolchains do not need (see Plan).
	Hidden []string
	// Home is the user's home, where git on the host reads the user's own
	// config: the hooks path it names is protected in the root too, and the
	// hooks its template directory puts in a new repository are not taken
	// for a command's. Empty: $HOME of the process that starts the session.
	Home string
	// Visible paths stay readable even where the session hides what is around
	// them (the spill directory under /tmp, so the model can read full output).
	Visible []string
	// Network shares the host's network; false gives the session a loopback of
	// its own and nothing else.
	Network bool
	// HostPorts are ports of the host's loopback that commands reach on their
	// own 127.0.0.1 and ::1 with the network off: shellgate forwards them (a
	// dev server, a database). At most MaxHostPorts. With Network, commands
	// reach the host's loopback anyway.
	HostPorts []int
	// EgressPort, with the network off, is a port of the session's own
	// loopback (127.0.0.1 and ::1) where EgressHandler serves each connection
	// commands make, outside the session: shellgate's allow-listing proxy,
	// the one way out of allow-listed egress. The sockets are made as those
	// of HostPorts are. 0: none.
	EgressPort int
	// EgressHandler serves one connection to EgressPort and closes it; it
	// must return soon once ctx ends (the session closes).
	EgressHandler func(ctx context.Context, c net.Conn) `json:"-"`
	// TempDir, when inside /tmp, is created there for the commands' TMPDIR.
	TempDir string
	// TmpSize caps the session's /tmp, in bytes; 0 means DefaultTmpSize.
	TmpSize int64
	Limits  Limits
}

// KeepCreated is the entry, in a command's environment, of a command the user
// approved having been shown the protected paths it writes (paths): those it
// creates, or the entries holding them, stay where they are (read-only)
// instead of going to the quarantine; any other protected path it creates
// goes there as any command's. What git's state gains (a rebase's todo) is
// kept as the approved command's. The helper removes it before the command
// starts.
func KeepCreated(paths []string) string {
	b, _ := json.Marshal(paths) // JSON: no NUL or newline in the value
	return helper.KeepCreatedVar + "=" + string(b)
}

// IsKeepCreated reports whether kv is a KeepCreated entry.
func IsKeepCreated(kv string) bool { return strings.HasPrefix(kv, helper.KeepCreatedVar+"=") }

// DefaultTmpSize is the size of a session's /tmp.
const DefaultTmpSize = 2 << 30

// Limits bound what a session's processes may use; zero fields are unlimited,
// except Procs, which defaults to DefaultProcs, and Memory, to DefaultMemory.
// The helper applies them too, so they are its type.
type Limits = helper.Limits

// DefaultMemory is the memory limit of a session that sets none: half the
// machine's memory, so that a runaway build fails in its session before the
// machine swaps; 0 (none) where the machine's size is unknown.
func DefaultMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb << 10 / 2
		}
	}
	return 0
}

// MaxHostPorts bounds Spec.HostPorts.
const MaxHostPorts = helper.MaxHostPorts

// DefaultProcs bounds the processes and threads of a session's commands,
// together (not the helper's: see cgroup.Group): a command that reaches the
// limit, a fork bomb, is stopped, and the session goes on.
const DefaultProcs = helper.DefaultProcs

// Report says which layers a session applied, for the envelope's
// context.sandbox: {"fs":"landlock-v7","net":"netns","pid":"pidns",…}.
// Missing lists the layers that could not be applied, each with why.
type Report struct {
	Layers  map[string]string
	Missing []string
}

// Layer names in a Report.
const (
	LayerFS      = helper.LayerFS      // writes confined: "landlock-vN"
	LayerNet     = helper.LayerNet     // "netns" (own loopback) or "host"
	LayerPID     = helper.LayerPID     // "pidns": own PID namespace and /proc
	LayerSecrets = helper.LayerSecrets // "hidden"
	LayerTmp     = helper.LayerTmp     // "private"
	LayerProcs   = "procs"             // "cgroup" or "rlimit": the process limit
	LayerMemory  = "memory"            // the session's memory limit, "4096MiB"
	// LayerHostPorts lists the host ports forwarded into the session's
	// loopback: "3000,5432". Absent when none are.
	LayerHostPorts = helper.LayerHostPorts
	// LayerEgress is where commands find the egress proxy: "127.0.0.1:3128".
	// Absent without Spec.EgressPort.
	LayerEgress = helper.LayerEgress
	// LayerSeccomp is the system call filter (Linux): "filter" when vsock
	// sockets and io_uring are refused.
	LayerSeccomp = helper.LayerSeccomp
)

// Uncontained says why the session does not contain code the policy cannot
// check (a script it cannot read, eval of text known only at run time), whose
// asks the policy drops in a sandbox: the first layer of those this system's
// session is meant to give (containing) that is missing, with the report's
// reason; "" when the session contains it.
func (r Report) Uncontained() string {
	for _, layer := range containing {
		if r.Layers[layer] == "" {
			if why := r.why(layer); why != "" {
				return why
			}
			return layer + ": not applied"
		}
	}
	for _, m := range r.Missing {
		layer, _, _ := strings.Cut(m, ":")
		if slices.Contains(breaking, layer) {
			return m
		}
	}
	return ""
}

// why is the first Missing entry about layer, or the session's own failure.
func (r Report) why(layer string) string {
	for _, m := range r.Missing {
		if strings.HasPrefix(m, layer+":") {
			return m
		}
	}
	for _, m := range r.Missing {
		if strings.HasPrefix(m, LayerUserNS+":") || strings.HasPrefix(m, "sandbox:") {
			return m
		}
	}
	return ""
}

// LayerUserNS names, in Missing, the user namespace that every other Linux
// namespace of the session is made in: without it there is no session.
const LayerUserNS = "userns"

// Map is the report as the envelope carries it.
func (r Report) Map() map[string]any {
	m := make(map[string]any, len(r.Layers)+1)
	for k, v := range r.Layers {
		m[k] = v
	}
	if len(r.Missing) > 0 {
		m["missing"] = r.Missing
	}
	return m
}

// String is a one-line summary, e.g. for `shellgate doctor`.
func (r Report) String() string {
	keys := make([]string, 0, len(r.Layers))
	for k := range r.Layers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		parts = append(parts, k+"="+r.Layers[k])
	}
	if len(r.Missing) > 0 {
		parts = append(parts, "missing: "+strings.Join(r.Missing, "; "))
	}
	return strings.Join(parts, " ")
}

// SandboxExec is the only sandbox-exec used on macOS.
const SandboxExec = seatbelt.Exec

// ErrUnsupported is returned by Start where this package has no sandbox.
var ErrUnsupported = errors.New("sandbox: not supported on this system")
