//go:build darwin || freebsd || netbsd

package checkpoint

import "syscall"

// statTimes is st's modification and change times, in nanoseconds.
func statTimes(st *syscall.Stat_t) (int64, int64) {
	return st.Mtimespec.Nano(), st.Ctimespec.Nano()
}
