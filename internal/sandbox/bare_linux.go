package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/shellgate/shellgate/internal/fsrules"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/shellgate/shellgate/internal/caps"
	"github.com/shellgate/shellgate/internal/copyup"
	"github.com/shellgate/shellgate/internal/runner"
	"github.com/shellgate/shellgate/internal/seccomp"
	"github.com/shellgate/shellgate/internal/supervisor"
	"github.com/shellgate/shellgate/internal/unixgate"
	"golang.org/x/sys/unix"
)

// A bare session is what a Session falls back to where the kernel makes no
// user namespace (a container started with Docker's or Kubernetes' default
// seccomp profile, user.max_user_namespaces = 0): no helper and no
// namespaces, so no view, /tmp, loopback or processes of the session's own.
// Each command is started through this executable again (bareFlag), which
// confines itself with what needs no namespace and then executes the
// command: Landlock (writes only in the writable paths and the tool caches,
// which are the host's here), the seccomp filter, no capabilities, no
// privilege gained at exec, a keyring of its own, the file size and CPU time
// limits. The
// report says what applied and what did not; the policy, which counts on the
// missing layers, asks as without a sandbox.

// bareFlag, as argv[1], makes this executable the confining wrapper of a bare
// session: argv[2] is its bareConfig, and the command follows "--".
const bareFlag = "--shellgate-sandbox-bare"

func init() {
	if len(os.Args) >= 4 && os.Args[1] == bareFlag && os.Args[3] == "--" {
		os.Exit(bareMain(os.Args[2], os.Args[4:]))
	}
}

// bareConfig is what the wrapper applies.
type bareConfig struct {
	Writable []string
	Limits   Limits
	// Probe: apply, report the layers on stdout (bareResult) and run nothing.
	Probe bool
	// Expect are the layers the probe applied: a command starts only under
	// every one of them, so that the report stays true.
	Expect []string
}

type bareResult struct {
	Layers  map[string]string
	Missing []string
}

// startBare starts a bare session, once a probe of the wrapper has shown
// what applies here. noUserNS says why the kernel made no user namespace.
func startBare(spec Spec, noUserNS string) (*Session, error) {
	cfg := bareConfig{Writable: slices.Concat(spec.Writable, spec.Caches), Limits: spec.Limits, Probe: true}
	if filepath.IsAbs(spec.TempDir) {
		cfg.Writable = append(cfg.Writable, spec.TempDir)
	}
	arg, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	probe := exec.CommandContext(ctx, "/proc/self/exe", bareFlag, string(arg), "--")
	probe.Env = []string{"GOMAXPROCS=1"}
	out, err := probe.Output()
	var res bareResult
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
	if arg, err = json.Marshal(cfg); err != nil {
		return nil, err
	}
	if spec.Network {
		res.Layers[LayerNet] = "host"
	}
	missing := []string{LayerUserNS + ": " + noUserNS + ", so no mount, network or PID namespace: no net, pid, tmp or secrets layer"}
	if spec.Limits.Memory > 0 || DefaultMemory() > 0 {
		missing = append(missing, LayerMemory+": no cgroup without a session, so no memory limit")
	}
	wrapper := &runner.Wrapper{Argv: func(argv []string) []string {
		return append([]string{"/proc/self/exe", bareFlag, string(arg), "--"}, argv...)
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

// bareMain is the confining wrapper: it confines its own thread, then
// executes argv from it, which inherits all of it.
func bareMain(config string, argv []string) int {
	runtime.LockOSThread() // the exec must come from the confined thread
	var cfg bareConfig
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "shellgate sandbox:", err)
		return 126
	}
	r := confineBare(cfg)
	if cfg.Probe {
		if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
			return 1
		}
		return 0
	}
	for _, layer := range cfg.Expect {
		if r.Layers[layer] == "" {
			fmt.Fprintf(os.Stderr, "shellgate sandbox: not run: %s\n", strings.Join(r.Missing, "; "))
			return 126
		}
	}
	if len(argv) == 0 {
		return 0
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "shellgate sandbox:", err)
		return 127
	}
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprintln(os.Stderr, "shellgate sandbox:", err)
	return 126
}

// confineBare applies to the calling thread, and to the process for the
// limits, what a bare session gives, as the launcher thread of a session
// does, and says what applied.
func confineBare(cfg bareConfig) bareResult {
	r := bareResult{Layers: map[string]string{}}
	miss := func(layer string, err error) { r.Missing = append(r.Missing, fmt.Sprintf("%s: %v", layer, err)) }
	if err := setLimits(cfg.Limits, false); err != nil {
		miss("limits", err)
	}
	r.Missing = append(r.Missing, LayerProcs+": no process limit: no cgroup without a session, and RLIMIT_NPROC would count the user's every process on the host")
	ruleset, abi, rerr := fsrules.Build(cfg.Writable, devices)
	if rerr != nil {
		miss(LayerFS, rerr)
	}
	// Without capabilities (a user other than root), there are none to give
	// up, and no right to change the bounding set.
	if err := caps.Drop(); err != nil && os.Geteuid() == 0 {
		miss("capabilities", err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0); errno != 0 {
		r.Missing = append(r.Missing, "keyring: the user's keyring stays readable ("+unix.ErrnoName(errno)+")")
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		miss("no_new_privs", err)
		return r // neither seccomp nor Landlock without it
	}
	if err := seccomp.Install(); err != nil {
		r.Missing = append(r.Missing, fmt.Sprintf("%s: the kernel takes no seccomp filter (%s), so vsock sockets and io_uring stay open to commands", LayerSeccomp, fsrules.ErrnoName(err)))
	} else {
		r.Layers[LayerSeccomp] = "filter"
	}
	if ruleset >= 0 {
		if err := llsys.LandlockRestrictSelf(ruleset, 0); err != nil {
			miss(LayerFS, fmt.Errorf("landlock_restrict_self: %s", fsrules.ErrnoName(err)))
			abi = 0
		} else {
			r.Layers[LayerFS] = "landlock-v" + strconv.Itoa(abi)
		}
		unix.Close(ruleset)
	}
	r.Missing = append(r.Missing, copyup.Layer+": a bare session has no helper to supervise, so a write through a hard link changes the file for its names outside the root too")
	g, err := supervisor.Supervise(abi, "a bare session has no helper to supervise", nil)
	if r.Missing = append(r.Missing, flatten(err)...); g.Unix != "" {
		r.Layers[unixgate.Layer] = g.Unix
	}
	return r
}
