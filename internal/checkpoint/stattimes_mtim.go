//go:build linux || openbsd

package checkpoint

import "syscall"

// statTimes is st's modification and change times, in nanoseconds.
func statTimes(st *syscall.Stat_t) (int64, int64) {
	return st.Mtim.Nano(), st.Ctim.Nano()
}
