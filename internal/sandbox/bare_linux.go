package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"

	"github.com/shellgate/shellgate/internal/confine"
	"github.com/shellgate/shellgate/internal/copyup"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/sandbox/helper"
)

// A bare session is what a Session falls back to where the kernel makes no
// user namespace (a container started with Docker's or Kubernetes' default
// seccomp profile, user.max_user_namespaces = 0): no helper and no
// namespaces, so no view, /tmp, loopback or processes of the session's own.
// Each command is started through package confine's wrapper, which confines
// itself with what needs no namespace and then executes the command:
// Landlock (writes only in the writable paths and the tool caches, which are
// the host's here), the seccomp filter, no capabilities, no privilege gained
// at exec, a keyring of its own, the file size and CPU time limits. The
// report says what applied and what did not; the policy, which counts on the
// missing layers, asks as without a sandbox.

// startBare starts a bare session, once a probe of the wrapper has shown
// what applies here. noUserNS says why the kernel made no user namespace.
func startBare(spec Spec, noUserNS string) (*Session, error) {
	const noHelper = "a bare session has no helper to supervise"
	for _, c := range spec.MakeCaches {
		if slices.Contains(spec.Caches, c) {
			os.MkdirAll(c, 0o755)
		}
	}
	cfg := confine.Config{
		Writable:     slices.Concat(spec.Writable, spec.Caches),
		Devices:      devices,
		Limits:       helper.Rlimits(spec.Limits, false),
		NoSupervisor: noHelper,
		Probe:        true,
	}
	if filepath.IsAbs(spec.TempDir) {
		cfg.Writable = append(cfg.Writable, spec.TempDir)
	}
	argv, err := confine.Argv(cfg, 0)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	probe := exec.CommandContext(ctx, argv[0], argv[1:]...)
	probe.Env = []string{"GOMAXPROCS=1"}
	out, err := probe.Output()
	var res confine.Result
	if err == nil {
		err = json.Unmarshal(out, &res)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: the confining wrapper: %w", err)
	}
	for layer := range res.Layers {
		cfg.Expect = append(cfg.Expect, layer)
	}
	cfg.Probe = false
	if _, err = confine.Argv(cfg, 0); err != nil {
		return nil, err
	}
	if spec.Network {
		res.Layers[LayerNet] = "host"
	}
	missing := []string{
		LayerUserNS + ": " + noUserNS + ", so no mount, network or PID namespace: no net, pid, tmp or secrets layer",
		LayerProcs + ": no process limit: no cgroup without a session, and RLIMIT_NPROC would count the user's every process on the host",
		copyup.Layer + ": " + noHelper + ", so a write through a hard link changes the file for its names outside the root too",
	}
	if spec.Limits.Memory > 0 || DefaultMemory() > 0 {
		missing = append(missing, LayerMemory+": no cgroup without a session, so no memory limit")
	}
	wrapper := &runner.Wrapper{Argv: func(cmd []string, files int) []string {
		argv, _ := confine.Argv(cfg, files, cmd...) // cfg encoded above
		return argv
	}}
	return &Session{
		bare:    wrapper,
		report:  Report{Layers: res.Layers, Missing: append(missing, res.Missing...)},
		root:    firstOf(spec.Writable),
		started: map[uint64]chan startReply{},
		exits:   map[uint64]chan *message{},
		trees:   map[int]string{},
		dead:    make(chan struct{}),
		gone:    make(chan struct{}),
	}, nil
}

func firstOf(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	return paths[0]
}

// bareLaunch starts a command of a bare session unless it is closed.
func (s *Session) bareLaunch(start func() (runner.Launched, error)) (runner.Launched, error) {
	if !s.Alive() {
		return nil, errors.New("sandbox: the session has ended")
	}
	return start()
}
