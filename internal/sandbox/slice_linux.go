package sandbox

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// wakeSlice is the CPU slice the helper's threads ask the scheduler for
// (EEVDF, Linux 6.12+; older kernels ignore it). Each command crosses the
// helper's threads — the one that reads the request, the launcher, the one
// that answers, the reaper — and each hand-off wakes a thread that then waits
// for a core: on a busy machine a whole slice of whatever runs there (about
// 3 ms, more after an idle gap). A short slice gives a woken thread an early
// deadline, so it runs at once; the helper works in bursts far shorter than
// this, so it gives up nothing.
const wakeSlice = 100_000 // ns, the kernel's least

// shortSlices asks for wakeSlice on every thread the helper has now; threads
// the runtime clones later from them inherit it.
func shortSlices() {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return
	}
	for _, t := range tasks {
		if tid := innerTID(t.Name()); tid > 0 {
			setSlice(tid, 0)
		}
	}
}

// innerTID is task's thread ID in the helper's own PID namespace, which
// sched_setattr takes: /proc may still be the host's, named by its IDs.
func innerTID(task string) int {
	b, err := os.ReadFile("/proc/self/task/" + task + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) == 0 {
				return 0
			}
			tid, _ := strconv.Atoi(f[len(f)-1])
			return tid
		}
	}
	return 0
}

// shortSliceForLauncher asks for wakeSlice on the calling thread, the
// launcher's, but not for the commands it forks (SCHED_FLAG_RESET_ON_FORK):
// they run with the kernel's defaults, as anywhere else.
func shortSliceForLauncher() { setSlice(0, unix.SCHED_FLAG_RESET_ON_FORK) }

func setSlice(tid int, flags uint64) {
	unix.SchedSetAttr(tid, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_NORMAL, Flags: flags, Runtime: wakeSlice}, 0)
}
