package helper

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// limitUserCounts sets the limits of the helper's user namespace (the
// current one: /proc/sys/user is each namespace's own), which it may while
// it holds CAP_SYS_RESOURCE there.
func limitUserCounts(limits map[string]int) error {
	var errs []error
	for name, n := range limits {
		if err := os.WriteFile(filepath.Join("/proc/sys/user", name), []byte(strconv.Itoa(n)), 0); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("user.%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}
