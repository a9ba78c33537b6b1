// Package helper is the sandbox session's helper process: the second start of
// the executable that package sandbox makes in the session's new namespaces
// (argv[0] Arg0), which is PID 1 there, builds the session's view from the
// plan's steps, and starts, reaps and reports every command of the session
// (see package sandbox for the session as a whole). Its init recognises the
// helper and never returns.
//
// It is a package of its own so that the helper's start runs few package
// initialisations: Go runs every linked package's init before main, in the
// order of their import paths among those whose imports are initialised,
// and this package's waits only for what it imports. It must not import
// package net or anything that does (package sandbox, its relays and the
// envelope's packages do), nor the terminal packages: each would put the
// initialisation of much of the binary before the helper's. The types
// shellgate and the helper share — the setup's Spec, the view's Steps, the
// control socket's frames (Message) — live here; package sandbox holds the
// shellgate side.
package helper

import "time"

// Spec is what of package sandbox's Spec the helper acts on, sent with the
// setup message; see sandbox.Spec for each field.
type Spec struct {
	OneShot       bool     `json:",omitempty"`
	Writable      []string `json:",omitempty"`
	Protected     []string `json:",omitempty"`
	GitDirs       []string `json:",omitempty"`
	Patterns      []string `json:",omitempty"`
	Quarantine    string   `json:",omitempty"`
	QuarantineLog string   `json:",omitempty"`
	StoreLinks    string   `json:",omitempty"`
	LinkCopyMax   int64    `json:",omitempty"`
	Network       bool     `json:",omitempty"`
	HostPorts     []int    `json:",omitempty"`
	EgressPort    int      `json:",omitempty"`
	Limits        Limits
}

// Limits bound what a session's processes may use; zero fields are unlimited,
// except Procs, which defaults to DefaultProcs, and Memory, to
// sandbox.DefaultMemory.
type Limits struct {
	Procs    int           // processes and threads of all the session's commands (not its helper's)
	Memory   int64         // bytes of memory of the whole session (needs a cgroup)
	FileSize int64         // bytes one file may grow to
	CPUTime  time.Duration // CPU time of one process
}

// DefaultProcs bounds the processes and threads of a session's commands,
// together (not the helper's: see cgroup.Group): a command that reaches the
// limit, a fork bomb, is stopped, and the session goes on.
const DefaultProcs = 2048

// MaxHostPorts bounds Spec.HostPorts.
const MaxHostPorts = 32

// Layer names in a session's report (see sandbox.Report) that the helper
// applies.
const (
	LayerFS        = "fs"
	LayerNet       = "net"
	LayerPID       = "pid"
	LayerSecrets   = "secrets"
	LayerTmp       = "tmp"
	LayerHostPorts = "host_ports"
	LayerEgress    = "egress"
	LayerSeccomp   = "seccomp"
)

// KeepCreatedVar names the entry, in a command's environment, of a command
// the user approved (sandbox.KeepCreated): its value is the JSON list of the
// protected paths it was shown. The helper removes it before the command
// starts.
const KeepCreatedVar = "SHELLGATE_SANDBOX_KEEP_CREATED"

// RootDirs are the system directories that hold what only root may read:
// the setup sends at most one tree of each (Step.AsOthers).
var RootDirs = []string{"/etc", "/var"}
