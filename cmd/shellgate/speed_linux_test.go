package main

import (
	"os"
	"path/filepath"

	"github.com/shellgate/shellgate/internal/cgroup"
)

// v1PidsCgroup is this process's cgroup in the v1 pids hierarchy, where a
// session's process limit is on this machine, and whether there is one this
// process may make cgroups in (as root).
func v1PidsCgroup() (string, bool) {
	own, err := cgroup.Own()
	if err != nil || cgroup.IsV2(cgroup.Root) || own["pids"] == "" || os.Getuid() != 0 {
		return "", false
	}
	return filepath.Join(cgroup.Root, "pids", own["pids"]), true
}
