package sandbox

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

func TestJobLimitsWindows(t *testing.T) {
	info := jobLimits(Limits{Procs: 10, Memory: 1 << 30, CPUTime: time.Second})
	b := info.BasicLimitInformation
	want := uint32(windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | windows.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION |
		windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS | windows.JOB_OBJECT_LIMIT_JOB_MEMORY | windows.JOB_OBJECT_LIMIT_PROCESS_TIME)
	if b.LimitFlags != want {
		t.Errorf("flags %#x, want %#x", b.LimitFlags, want)
	}
	if b.ActiveProcessLimit != 10 || info.JobMemoryLimit != 1<<30 || b.PerProcessUserTimeLimit != 10_000_000 {
		t.Errorf("limits %+v", info)
	}
}

// Close ends the session's processes, background ones included.
func TestWindowsSessionClose(t *testing.T) {
	s, err := Start(Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Report().Map(); got[LayerProcs] != "job-object" || !strings.Contains(s.Report().String(), "fs: ") {
		t.Errorf("report %v", got)
	}
	p, err := s.Launch([]string{`C:\Windows\System32\ping.exe`, "-n", "60", "127.0.0.1"}, nil, "", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the command survived Close")
	}
}
