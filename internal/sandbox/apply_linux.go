package sandbox

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/shellgate/shellgate/internal/copyup"
	"github.com/shellgate/shellgate/internal/unixgate"
	"golang.org/x/sys/unix"
)

// apply sets the session up from inside its namespaces, in the helper, before
// any command runs: the view the plan's steps build, loopback, limits, then
// the launcher thread, which gives up what commands must not inherit and
// restricts itself with Landlock. A step that fails is reported missing, not
// fatal: the caller decides whether a missing layer stops the session. The
// mounter stays to protect paths that appear later.
func apply(spec *Spec, steps []Step) (layers map[string]string, missing []string, m *mounter, l *launcher, err error) {
	layers = map[string]string{}
	miss := func(layer string, err error) { missing = append(missing, fmt.Sprintf("%s: %v", layer, err)) }

	m = newMounter(spec)
	if err := m.private(); err != nil {
		miss("mounts", err)
	} else if failed, err := buildView(steps); err != nil {
		var half *halfBuilt
		if errors.As(err, &half) {
			return nil, nil, nil, nil, err
		}
		m.ready = false
		miss("view", err)
	} else {
		proc := true
		for _, f := range failed {
			proc = proc && !strings.HasPrefix(f, string(OpProc)+" ")
			missing = append(missing, "view: "+f)
		}
		layers[LayerTmp] = "private"
		layers[LayerSecrets] = "hidden"
		if proc {
			layers[LayerPID] = "pidns"
		}
		if _, _, err := m.protect(nil, nil); err != nil { // the user's own, as they are
			miss("protected", err)
		}
	}

	if spec.Network {
		layers[LayerNet] = "host"
	} else if err := loopbackUp(); err != nil {
		miss(LayerNet, err)
	} else {
		layers[LayerNet] = "netns"
	}
	if err := setLimits(spec.Limits, true); err != nil {
		miss("limits", err)
	}
	// Its /proc entries and memory stay closed to commands.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		miss(LayerPID, fmt.Errorf("PR_SET_DUMPABLE: %w: the helper's /proc entries and memory are open to commands", err))
	}
	l, lerr := newLauncher(spec, WritableDirs(steps))
	missing = append(missing, flatten(lerr)...)
	if l.ruleset >= 0 {
		layers[LayerFS] = "landlock-v" + strconv.Itoa(l.abi)
	}
	if l.seccomp {
		layers[LayerSeccomp] = "filter"
	}
	if l.unix != "" {
		layers[unixgate.Layer] = l.unix
	}
	if l.copyup {
		layers[copyup.Layer] = "copy-up"
	}
	return layers, missing, m, l, nil
}

// loopbackUp brings up lo in the session's own network namespace.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// setLimits sets the per-process limits every command inherits. The process
// count is counted per user within the session's user namespace; the kernel
// does not apply it to the host's root, which the cgroup (set by shellgate)
// covers. Without nproc the process count is left alone: outside a user
// namespace it would count every process of the user on the host.
func setLimits(l Limits, nproc bool) error {
	set := func(res int, v uint64) error {
		return unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v})
	}
	procs := l.Procs
	if procs <= 0 {
		procs = DefaultProcs
	}
	if nproc {
		if err := set(unix.RLIMIT_NPROC, uint64(procs)); err != nil {
			return fmt.Errorf("processes: %w", err)
		}
	}
	if l.FileSize > 0 {
		if err := set(unix.RLIMIT_FSIZE, uint64(l.FileSize)); err != nil {
			return fmt.Errorf("file size: %w", err)
		}
	}
	if l.CPUTime > 0 {
		if err := set(unix.RLIMIT_CPU, uint64(max(1, l.CPUTime.Seconds()))); err != nil {
			return fmt.Errorf("CPU time: %w", err)
		}
	}
	return nil
}

// flatten lists the errors that err joins (errors.Join), one a line of the
// report, each naming its layer.
func flatten(err error) []string {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range j.Unwrap() {
		out = append(out, flatten(e)...)
	}
	return out
}
