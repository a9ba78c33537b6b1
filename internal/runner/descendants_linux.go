package runner

// Descendants lists the processes below pid, children first, from the
// kernel's lists of children (a few files, where a scan of /proc reads every
// process of the machine). ok is false where the kernel keeps no such lists
// (CONFIG_PROC_CHILDREN) or pid is gone. A process forked or reparented
// while the lists are read may be missed.
func Descendants(pid int) (pids []int, ok bool) {
	all, ok := descendants(pid)
	if !ok || len(all) == 0 {
		return nil, false
	}
	pids = make([]int, 0, len(all)-1)
	for _, m := range all[1:] {
		pids = append(pids, m.pid)
	}
	return pids, true
}
