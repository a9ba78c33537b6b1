package runner

import (
	"os"

	"golang.org/x/sys/unix"
)

func enlargePipe(*os.File) {}

const (
	zombie   = 5          // SZOMB in <sys/proc.h>
	fionread = 0x4004667f // FIONREAD in <sys/filio.h>
)

func startOf(k *unix.KinfoProc) uint64 {
	t := k.Proc.P_starttime
	return uint64(t.Sec)*1e6 + uint64(t.Usec)
}

// groupMembers returns the live (non-zombie) processes in group pgid.
func groupMembers(pgid int, _ Launcher) []procID {
	if !groupExists(pgid) {
		return nil
	}
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return nil
	}
	var members []procID
	for i := range procs {
		if procs[i].Proc.P_stat != zombie {
			members = append(members, procID{int(procs[i].Proc.P_pid), startOf(&procs[i])})
		}
	}
	return members
}

// membersAmong returns the live members of group pgid (pids: a tree that
// holds them, which only Linux's sandbox has).
func membersAmong(pgid int, _ []int) []procID { return groupMembers(pgid, nil) }

// liveOf returns those of ms that are still alive and still in group pgid.
func liveOf(pgid int, ms []procID) []procID {
	var live []procID
	for _, p := range ms {
		k, err := unix.SysctlKinfoProc("kern.proc.pid", p.PID)
		if err == nil && k.Proc.P_pid == int32(p.PID) && startOf(k) == p.Start &&
			int(k.Eproc.Pgid) == pgid && k.Proc.P_stat != zombie {
			live = append(live, p)
		}
	}
	return live
}

// markedProcs returns the live processes of our user whose initial environment
// (from KERN_PROCARGS2) has an entry starting with pattern.
func markedProcs(pattern []byte, _ Launcher) []procID {
	if pattern == nil {
		return nil
	}
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.uid", os.Getuid())
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var found []procID
	for i := range procs {
		k := &procs[i]
		pid := int(k.Proc.P_pid)
		if pid == self || pid <= 1 || k.Proc.P_stat == zombie {
			continue
		}
		raw, err := unix.SysctlRaw("kern.procargs2", pid)
		if err == nil && envHas(procArgsEnv(raw), pattern) {
			found = append(found, procID{pid, startOf(k)})
		}
	}
	return found
}

// unread returns the number of bytes waiting in a pipe, or 0 if unknown.
func unread(f *os.File) int {
	n := 0
	if raw, err := f.SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), fionread) })
	}
	return n
}
