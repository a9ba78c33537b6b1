// Package jobobject maps a sandbox session's limits to what a Windows job
// object enforces, in the terms of JOBOBJECT_EXTENDED_LIMIT_INFORMATION; it
// builds everywhere, so that the mapping is tested on every system.
package jobobject

import (
	"math"
	"time"
)

// Windows job object limit flags (JOB_OBJECT_LIMIT_* in winnt.h).
const (
	ProcessTime    = 0x00000002
	ActiveProcess  = 0x00000008
	JobMemory      = 0x00000200
	DieOnException = 0x00000400
	KillOnClose    = 0x00002000
)

// Limits are a session's: processes (0: the caller's default), memory of
// the whole session, one file's size, one process's CPU time.
type Limits struct {
	Procs    int
	Memory   int64
	FileSize int64
	CPUTime  time.Duration
}

// Set is what a Windows job object enforces of Limits.
type Set struct {
	Flags           uint32
	ActiveProcesses uint32 // ActiveProcessLimit: processes (not threads) at once
	JobMemory       uint64 // JobMemoryLimit: committed bytes of all processes together
	ProcessUserTime int64  // PerProcessUserTimeLimit, in 100 ns ticks
	Missing         []string
}

// Of maps l to a job object's: every job closes with its processes killed
// and no error dialog waiting on a crash; Procs (default defaultProcs)
// bounds the processes; Memory the whole job's committed memory;
// CPUTime each process's user time. A job has no file size limit.
func Of(l Limits, defaultProcs int) Set {
	s := Set{Flags: KillOnClose | DieOnException}
	procs := l.Procs
	if procs <= 0 {
		procs = defaultProcs
	}
	s.Flags |= ActiveProcess
	s.ActiveProcesses = uint32(min(int64(procs), math.MaxUint32))
	if l.Memory > 0 {
		s.Flags |= JobMemory
		s.JobMemory = uint64(l.Memory)
	}
	if l.CPUTime > 0 {
		s.Flags |= ProcessTime
		s.ProcessUserTime = max(int64(l.CPUTime/(100*time.Nanosecond)), 1)
	}
	if l.FileSize > 0 {
		s.Missing = append(s.Missing, "file_size: a Windows job object cannot limit file sizes")
	}
	return s
}
