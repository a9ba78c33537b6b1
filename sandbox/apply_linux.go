package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// apply sets the session up from inside its namespaces, in the helper, before
// any command runs: mounts, loopback, limits, then the helper gives up what
// commands must not inherit and restricts itself with Landlock, which every
// command inherits. Each layer that fails is reported missing, not fatal: the
// caller decides whether a missing layer stops the session.
func apply(spec *Spec) (layers map[string]string, missing []string) {
	layers = map[string]string{}
	miss := func(layer string, err error) { missing = append(missing, fmt.Sprintf("%s: %v", layer, err)) }

	m := newMounter(spec)
	if err := m.private(); err != nil {
		miss("mounts", err)
	} else {
		if err := m.maskTemp(); err != nil {
			miss(LayerTmp, err)
		} else {
			layers[LayerTmp] = "private"
		}
		if err := m.maskDaemons(); err != nil {
			miss("sockets", err)
		}
		if err := m.reexpose(); err != nil {
			miss("mounts", err)
		}
		if _, err := m.hide(); err != nil {
			miss(LayerSecrets, err)
		} else {
			layers[LayerSecrets] = "hidden"
		}
		if err := m.protect(); err != nil {
			miss("protected", err)
		}
		if err := m.proc(); err != nil {
			miss(LayerPID, fmt.Errorf("own /proc: %w", err))
		} else {
			layers[LayerPID] = "pidns"
		}
	}
	m.closeFDs()

	if spec.Network {
		layers[LayerNet] = "host"
	} else if err := loopbackUp(); err != nil {
		miss(LayerNet, err)
	} else {
		layers[LayerNet] = "netns"
	}
	if err := setLimits(spec.Limits); err != nil {
		miss("limits", err)
	}
	unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) // its /proc entries and memory stay closed to commands
	if err := dropCapabilities(); err != nil {
		miss("capabilities", err)
	}
	if abi, err := restrictFS(spec); err != nil {
		miss(LayerFS, err)
	} else {
		layers[LayerFS] = "landlock-v" + strconv.Itoa(abi)
	}
	return layers, missing
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
// covers.
func setLimits(l Limits) error {
	set := func(res int, v uint64) error {
		return unix.Setrlimit(res, &unix.Rlimit{Cur: v, Max: v})
	}
	procs := l.Procs
	if procs <= 0 {
		procs = DefaultProcs
	}
	if err := set(unix.RLIMIT_NPROC, uint64(procs)); err != nil {
		return fmt.Errorf("processes: %w", err)
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

// dropCapabilities empties the bounding and ambient sets of every thread, so a
// command — even one running as root in the session's user namespace — starts
// with no capabilities: it cannot undo a mount or leave the namespaces. The
// helper keeps its own, to report PIDs.
func dropCapabilities() error {
	if err := llsys.AllThreadsPrctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("ambient: %w", err)
	}
	// Root in the session gains nothing at exec either, and no command can
	// change that.
	const secure = 1<<0 | 1<<1 | 1<<6 | 1<<7 // SECBIT_NOROOT, its lock, SECBIT_NO_CAP_AMBIENT_RAISE, its lock
	if err := llsys.AllThreadsPrctl(unix.PR_SET_SECUREBITS, secure, 0, 0, 0); err != nil {
		return fmt.Errorf("securebits: %w", err)
	}
	last := lastCap()
	for c := 0; c <= last; c++ {
		if err := llsys.AllThreadsPrctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && err != unix.EINVAL {
			return fmt.Errorf("bounding set: %w", err)
		}
	}
	return nil
}

func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return unix.CAP_LAST_CAP
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return unix.CAP_LAST_CAP
	}
	return n
}

// devices commands may read, write and use ioctls on.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// restrictFS applies Landlock: everything readable and executable, writable only
// the session's paths and a few devices. It returns the kernel's Landlock ABI.
func restrictFS(spec *Spec) (int, error) {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0, fmt.Errorf("no Landlock in this kernel: %w", err)
	}
	dirs, files := []string{"/tmp", "/dev/shm"}, []string{}
	for _, p := range spec.Writable {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		} else if err == nil {
			files = append(files, p)
		}
	}
	cfg := landlock.V7.BestEffort()
	err = cfg.RestrictPaths(
		landlock.RODirs("/"),
		landlock.RWDirs(dirs...).WithRefer().IgnoreIfMissing(),
		landlock.RWFiles(files...).IgnoreIfMissing(),
		landlock.RWFiles(devices...).WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts").WithIoctlDev().IgnoreIfMissing(),
	)
	if err != nil {
		return 0, err
	}
	// Signals and abstract Unix sockets stay within the session (ABI 6).
	if err := cfg.RestrictScoped(); err != nil {
		return 0, err
	}
	return abi, nil
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}
