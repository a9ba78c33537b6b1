package helper

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/shellgate/shellgate/internal/confine"
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
func apply(spec *Spec, steps []Step, counts map[string]int) (layers map[string]string, missing []string, m *mounter, l *launcher, err error) {
	layers = map[string]string{}
	miss := func(layer string, err error) { missing = append(missing, fmt.Sprintf("%s: %v", layer, err)) }

	// First, while the helper may: what the session's commands make counts
	// against the host user's per-user limits only up to these.
	if err := limitUserCounts(counts); err != nil {
		miss("limits", err)
	}

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
	if err := Rlimits(spec.Limits, true).Set(); err != nil {
		miss("limits", err)
	}
	// Its /proc entries and memory stay closed to commands.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		miss(LayerPID, fmt.Errorf("PR_SET_DUMPABLE: %w: the helper's /proc entries and memory are open to commands", err))
	}
	l, lerr := newLauncher(spec, WritableDirs(steps), m)
	missing = append(missing, confine.Flatten(lerr)...)
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

// Rlimits are the per-process limits of l that every command inherits. The
// process count, counted per user within the session's user namespace, is
// left alone without one (inUserNS false): there it would count every
// process of the user on the host. The kernel does not apply it to the
// host's root, which the cgroup (set by shellgate) covers.
func Rlimits(l Limits, inUserNS bool) confine.Rlimits {
	r := confine.Rlimits{FileSize: l.FileSize, CPUTime: l.CPUTime}
	if inUserNS {
		r.Procs = cmp.Or(max(l.Procs, 0), DefaultProcs)
	}
	return r
}
