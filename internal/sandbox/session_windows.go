package sandbox

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/shellgate/shellgate/internal/jobobject"
	"github.com/shellgate/shellgate/internal/runner"
	"golang.org/x/sys/windows"
)

// containing are the layers that contain what the policy cannot check (see
// Report.Uncontained): here, the write confinement.
var (
	containing = []string{LayerFS}
	breaking   []string
)

// A Session on Windows is a job object that every command of the Gate runs in
// (each in a job of its own nested in it; see package runner): created with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and held only by this process, so Close —
// or shellgate's exit, however it comes — kills every process the commands
// started, background ones included; and with the process and memory limits of
// Spec.Limits. That is all: Windows has no unprivileged equivalent of the
// Linux layers, so files, network and secrets are not confined, and Report
// says so.
type Session struct {
	job    windows.Handle
	wrap   runner.Wrapper
	report Report

	mu     sync.Mutex
	closed bool
}

// Start creates the session's job object.
func Start(spec Spec) (*Session, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("sandbox: cannot create a job object: %w", err)
	}
	info := jobLimits(spec.Limits)
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("sandbox: cannot set the job object's limits: %w", err)
	}
	return &Session{job: job, wrap: runner.Wrapper{Job: uintptr(job)}, report: windowsReport(spec)}, nil
}

// jobLimits is the job object's limit information for l.
func jobLimits(l Limits) windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION {
	s := jobobject.Of(jobobject.Limits(l), DefaultProcs)
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = s.Flags
	info.BasicLimitInformation.ActiveProcessLimit = s.ActiveProcesses
	info.BasicLimitInformation.PerProcessUserTimeLimit = s.ProcessUserTime
	info.JobMemoryLimit = uintptr(min(s.JobMemory, uint64(^uintptr(0))))
	return info
}

// windowsReport says what a job object gives and what it does not.
func windowsReport(spec Spec) Report {
	r := Report{Layers: map[string]string{LayerProcs: "job-object"}}
	r.Missing = append(r.Missing,
		"fs: Windows has no write confinement for a command: it can write wherever the user can",
		"secrets: the user's secret files stay readable on Windows")
	if spec.Network {
		r.Layers[LayerNet] = "host"
	} else {
		r.Missing = append(r.Missing, "net: Windows has no network confinement for a command: the network stays on")
	}
	r.Missing = append(r.Missing,
		"pid: no process isolation on Windows: commands see the user's other processes",
		"tmp: the temp dir is a private directory of the host's, not the session's own")
	r.Missing = append(r.Missing, jobobject.Of(jobobject.Limits(spec.Limits), DefaultProcs).Missing...)
	return r
}

// Alive reports whether the session can start commands.
func (s *Session) Alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.closed
}

// Report says what the session applies.
func (s *Session) Report() Report { return s.report }

// Launch starts argv inside the session's job.
func (s *Session) Launch(argv, env []string, dir string, stdin, stdout, stderr *os.File, extra ...*os.File) (runner.Launched, error) {
	s.mu.Lock()
	defer s.mu.Unlock() // held, so Close cannot close the job under a start
	if s.closed {
		return nil, errors.New("sandbox: session closed")
	}
	return s.wrap.Launch(argv, env, dir, stdin, stdout, stderr, extra...)
}

// Contains reports true: the commands are this process's children.
func (s *Session) Contains(int) bool { return true }

// InnerPIDs returns pids as they are: Windows has one PID space.
func (*Session) InnerPIDs(pids []int) []int { return pids }

// Close kills every process in the session and closes the job.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	err := windows.TerminateJobObject(s.job, 1)
	if cerr := windows.CloseHandle(s.job); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sandbox: closing the job object: %w", err)
	}
	return nil
}

// KeepReadOnly does nothing here: the profile protects what Spec names.
func (*Session) KeepReadOnly([]string) {}

// Detach does nothing here: no command boundary is acted on.
func (*Session) Detach(int) {}

// Idle does nothing here: no helper maps the executable.
func (*Session) Idle() {}

// Guard reports that the session moves no protected path aside: where a
// command may not write one at all, there is nothing to move.
func (*Session) Guard() (pinned []string, guarded bool) { return nil, false }

// TakeNotes says nothing here: no command is stopped for a process limit.
func (*Session) TakeNotes() []string { return nil }

// OnStopped never calls f here: no guard ends a session's processes.
func (*Session) OnStopped(f func(paths []string)) {}

// GitKnown: nothing guards the root's git state here.
func (*Session) GitKnown() (known []string, version string, ok bool) { return nil, "", false }
