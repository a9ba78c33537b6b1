package inherit

import (
	"errors"
	"math"

	"golang.org/x/sys/unix"
)

func stop(first int) error {
	err := unix.CloseRange(uint(first), math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) { // before Linux 5.11
		return stopListed(first, "/proc/self/fd")
	}
	return err
}
