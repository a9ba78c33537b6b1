// Package textpagestest measures, for tests, how much of a process's
// executable is mapped in: what textpages.Drop gives back.
package textpagestest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ExeResidentKB is the resident size, in kB, of process pid's mappings of
// its own executable, summed from /proc/PID/smaps.
func ExeResidentKB(pid int) (int, error) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return 0, err
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return 0, err
	}
	kb, ours := 0, false
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case !strings.HasSuffix(f[0], ":"):
			ours = len(f) >= 6 && f[5] == exe
		case ours && f[0] == "Rss:" && len(f) >= 2:
			n, _ := strconv.Atoi(f[1])
			kb += n
		}
	}
	return kb, nil
}
