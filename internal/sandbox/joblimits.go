package sandbox

import (
	"math"
	"time"
)

// Windows job object limit flags (JOB_OBJECT_LIMIT_* in winnt.h), here so that
// the mapping from Limits is tested on every system.
const (
	jobLimitProcessTime    = 0x00000002
	jobLimitActiveProcess  = 0x00000008
	jobLimitJobMemory      = 0x00000200
	jobLimitDieOnException = 0x00000400
	jobLimitKillOnClose    = 0x00002000
)

// jobLimitSet is what a Windows job object enforces of Limits, in the terms of
// JOBOBJECT_EXTENDED_LIMIT_INFORMATION.
type jobLimitSet struct {
	Flags           uint32
	ActiveProcesses uint32 // ActiveProcessLimit: processes (not threads) at once
	JobMemory       uint64 // JobMemoryLimit: committed bytes of all processes together
	ProcessUserTime int64  // PerProcessUserTimeLimit, in 100 ns ticks
	Missing         []string
}

// jobLimitsOf maps Limits to a job object's: every job closes with its
// processes killed and no error dialog waiting on a crash; Procs (default
// DefaultProcs) bounds the processes; Memory the whole job's committed memory;
// CPUTime each process's user time. A job has no file size limit.
func jobLimitsOf(l Limits) jobLimitSet {
	s := jobLimitSet{Flags: jobLimitKillOnClose | jobLimitDieOnException}
	procs := l.Procs
	if procs <= 0 {
		procs = DefaultProcs
	}
	s.Flags |= jobLimitActiveProcess
	s.ActiveProcesses = uint32(min(int64(procs), math.MaxUint32))
	if l.Memory > 0 {
		s.Flags |= jobLimitJobMemory
		s.JobMemory = uint64(l.Memory)
	}
	if l.CPUTime > 0 {
		s.Flags |= jobLimitProcessTime
		s.ProcessUserTime = max(int64(l.CPUTime/(100*time.Nanosecond)), 1)
	}
	if l.FileSize > 0 {
		s.Missing = append(s.Missing, "file_size: a Windows job object cannot limit file sizes")
	}
	return s
}
