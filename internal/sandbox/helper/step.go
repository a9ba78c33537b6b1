package helper

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// The steps that build a session's view: package sandbox plans them (Plan)
// where the host is seen, and the helper applies them (view_linux.go).

// StepOp is what a Step does.
type StepOp string

const (
	// OpTmpfs mounts an empty tmpfs of Size bytes; one that is not Write is
	// made read-only by an OpReadOnly step once what it holds is mounted.
	OpTmpfs StepOp = "tmpfs"
	// OpBind binds the host's Src at Path, read-only unless Write, however
	// deep (every mount under Src comes along read-only).
	OpBind StepOp = "bind"
	// OpOverlay mounts Src (read-only) with the writable layer Upper on top:
	// writes land in Upper, never in Src.
	OpOverlay StepOp = "overlay"
	// OpSymlink makes Path a symlink to Src.
	OpSymlink StepOp = "symlink"
	// OpFile writes Data to a read-only file at Path (a setting file with its
	// credentials taken out).
	OpFile StepOp = "file"
	// OpDevpts mounts a terminal instance of the session's own at Path.
	OpDevpts StepOp = "devpts"
	// OpProc mounts the session's /proc.
	OpProc StepOp = "proc"
	// OpMask hides what is at Path (a host socket): the null device on a
	// file, an empty read-only directory on a directory.
	OpMask StepOp = "mask"
	// OpReadOnly makes the mount at Path read-only, once it is populated.
	OpReadOnly StepOp = "read-only"
)

// A Step is one piece of the session's view. Paths are absolute, as commands
// see them; Src is a host path.
type Step struct {
	Op    StepOp `json:"op"`
	Path  string `json:"path"`
	Src   string `json:"src,omitempty"`
	Upper string `json:"upper,omitempty"` // OpOverlay: a host directory of shellgate's
	Data  []byte `json:"data,omitempty"`  // OpFile
	Mode  uint32 `json:"mode,omitempty"`  // OpTmpfs: the root directory's mode
	Size  int64  `json:"size,omitempty"`  // OpTmpfs: bytes
	Write bool   `json:"write,omitempty"`
	// AsOthers: an OpBind of a tree shellgate hands the session (package
	// idmap), where every file shows as nobody's.
	AsOthers bool     `json:"as_others,omitempty"`
	tree     *os.File // the helper's descriptor of that tree
	// Try: a Src that is gone by the time the step runs is skipped, not a
	// missing layer (a cache removed meanwhile).
	Try bool   `json:"try,omitempty"`
	Why string `json:"why,omitempty"`
}

// String is the step as `doctor --plan` prints it.
func (s Step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-9s %s", s.Op, s.Path)
	switch s.Op {
	case OpBind, OpOverlay:
		if s.Src != s.Path && s.Src != "" {
			b.WriteString(" ← " + s.Src)
		}
	case OpSymlink:
		b.WriteString(" → " + s.Src)
	}
	if s.Op == OpBind || s.Op == OpTmpfs {
		if s.Write {
			b.WriteString(" (rw)")
		} else {
			b.WriteString(" (ro)")
		}
	}
	if s.Why != "" {
		b.WriteString("   # " + s.Why)
	}
	return b.String()
}

// Devices are the host's device nodes the view shows.
var Devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// WritableDirs are the paths commands may write beneath in a plan: what
// Landlock allows on top of the mounts.
func WritableDirs(steps []Step) []string {
	var dirs []string
	for _, s := range steps {
		if s.Write && (s.Op == OpTmpfs || s.Op == OpOverlay || s.Op == OpBind) && !slices.Contains(Devices, s.Path) && s.Path != "/dev" {
			dirs = append(dirs, s.Path)
		}
	}
	return dirs
}
