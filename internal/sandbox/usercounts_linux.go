package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// userCounts are the kernel's per-user counts under /proc/sys/user. Each is
// charged to the user in every user namespace above the one an object is
// made in: what a session's commands make (an inotify instance, a nested
// user namespace held open by a descriptor) counts against the host user's
// limit too, shared with every process of that user on the host (for root,
// the whole system's daemons; for any user, their editor's file watchers and
// other projects' shellgate sessions, which need a user namespace each).
var userCounts = []string{
	"max_cgroup_namespaces", "max_fanotify_groups", "max_fanotify_marks",
	"max_inotify_instances", "max_inotify_watches", "max_ipc_namespaces",
	"max_mnt_namespaces", "max_net_namespaces", "max_pid_namespaces",
	"max_time_namespaces", "max_user_namespaces", "max_uts_namespaces",
}

// sessionUserCounts are the limits a session's own user namespace is given:
// half of the host's for each count this kernel has, so that one session
// cannot take all of one (the host's limit still binds the sum). The helper
// sets them (helper.Message.UserCounts).
var sessionUserCounts = sync.OnceValue(func() map[string]int {
	m := map[string]int{}
	for _, name := range userCounts {
		b, err := os.ReadFile(filepath.Join("/proc/sys/user", name))
		if err != nil {
			continue // not on this kernel
		}
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			m[name] = max(n/2, 1)
		}
	}
	return m
})
