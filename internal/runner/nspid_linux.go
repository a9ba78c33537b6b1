package runner

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// InnerPID reads the PID one namespace down from /proc/PID/status
// ("NSpid: 4242 7"): the number a sandbox session's processes know it by;
// 0 outside a namespace below ours.
func InnerPID(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
			f := strings.Fields(rest)
			if len(f) < 2 {
				return 0 // not in a namespace of ours
			}
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	return 0
}
