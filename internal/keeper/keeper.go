// Package keeper keeps a project's checkpoint store open between one-shot
// runs: a small shellgate process per root (`shellgate checkpoint-keeper`,
// started detached by the first run that wants it) holds a checkpoint.Store
// whose inotify watch sees what changes in the root, and takes checkpoints
// for the runs that ask over a unix socket in the store's directory (0700,
// the peer's uid checked). A run then pays for what changed, not for a stat
// of every file. Anything amiss — no keeper, one of another build or
// options, one that dies or stalls — and the run checkpoints in-process, as
// without it: the keeper only ever saves time.
//
// The keeper exits after an idle time, when its root, its store or its
// socket goes, when its executable is replaced, and on SIGTERM. Linux only
// (it is worth having only with inotify); elsewhere Dial and Serve fail.
package keeper

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/shellgate/shellgate/internal/checkpoint"
)

// Protocol is the version of the exchange below; a keeper answers only a
// client of its own protocol, build and options.
const Protocol = 2 // 2: requests say what to leave out

// ErrUnsupported is returned where there is no keeper (not Linux).
var ErrUnsupported = errors.New("keeper: not available on this system")

// SocketName and LockName are the keeper's files in the project's store.
const (
	SocketName = "keeper.sock"
	LockName   = "keeper.lock"
)

// maxSocketPath is sun_path's size less its NUL: a longer store path gets no
// keeper.
const maxSocketPath = 107

// Socket is the keeper's socket for the store of o.
func Socket(o checkpoint.Options) (string, error) {
	dir, err := checkpoint.StoreDir(o)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, SocketName)
	if len(p) > maxSocketPath {
		return "", fmt.Errorf("keeper: socket path %s is longer than a unix socket's %d bytes", p, maxSocketPath)
	}
	return p, nil
}

// Args are what a keeper is started with (one JSON argument).
type Args struct {
	Options checkpoint.Options `json:"options"`
	Idle    time.Duration      `json:"idle"`
}

// optionsKey says which options a store was opened with; a keeper of other
// options would keep other checkpoints.
func optionsKey(o checkpoint.Options) string {
	o.Dir = resolveDir(o.Dir)
	b, _ := json.Marshal(o) // Now is left out
	return string(b)
}

// hello is the client's first line; welcome the keeper's answer.
type hello struct {
	Protocol int    `json:"protocol"`
	Build    string `json:"build"`   // the client's executable (identity)
	Options  string `json:"options"` // optionsKey
}

type welcome struct {
	OK  bool   `json:"ok"`
	Why string `json:"why,omitempty"` // not OK: the keeper quits
}

// request asks for one checkpoint: Op "snapshot" (Label, Command, Session)
// or "finish" (ID), leaving out what Leave says.
type request struct {
	Op      string `json:"op"`
	Label   string `json:"label,omitempty"`
	Command string `json:"command,omitempty"`
	Session string `json:"session,omitempty"`
	ID      int    `json:"id,omitempty"`
	// Leave: what the checkpoint leaves out (a sandboxed session's
	// protected paths: checkpoint.Leave).
	Leave *checkpoint.Leave `json:"leave,omitempty"`
}

// reply is one line of the keeper's answer: Busy lines while it works (the
// client's bound on silence), then the result.
type reply struct {
	Busy    bool                `json:"busy,omitempty"`
	ID      int                 `json:"id,omitempty"`
	Summary *checkpoint.Summary `json:"summary,omitempty"`
	Err     string              `json:"err,omitempty"`
}

// build names an executable file by what changes when it is replaced: a
// keeper of another build (or whose binary was reinstalled) does not answer.
func build(exe string) (string, error) {
	fi, err := os.Stat(exe)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s %s", fileID(fi), fi.ModTime().UTC().Format(time.RFC3339Nano)), nil
}

// selfBuild is this process's build.
func selfBuild() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return build(exe)
}

// resolveDir is dir, or the default store directory for "".
func resolveDir(dir string) string {
	if dir == "" {
		dir, _ = checkpoint.DefaultDir()
	}
	return dir
}
