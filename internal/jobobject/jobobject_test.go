package jobobject

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// DefaultProcs stands for the caller's default.
const DefaultProcs = 2048

func TestOf(t *testing.T) {
	const always = KillOnClose | DieOnException | ActiveProcess
	for _, tc := range []struct {
		name string
		in   Limits
		want Set
	}{
		{"defaults", Limits{}, Set{Flags: always, ActiveProcesses: DefaultProcs}},
		{"procs", Limits{Procs: 50}, Set{Flags: always, ActiveProcesses: 50}},
		{"memory", Limits{Memory: 1 << 30}, Set{Flags: always | JobMemory, ActiveProcesses: DefaultProcs, JobMemory: 1 << 30}},
		{"cpu", Limits{CPUTime: 2 * time.Second}, Set{Flags: always | ProcessTime, ActiveProcesses: DefaultProcs, ProcessUserTime: 20_000_000}},
		{"tiny cpu", Limits{CPUTime: time.Nanosecond}, Set{Flags: always | ProcessTime, ActiveProcesses: DefaultProcs, ProcessUserTime: 1}},
		{"file size", Limits{FileSize: 1 << 20}, Set{Flags: always, ActiveProcesses: DefaultProcs,
			Missing: []string{"file_size: a Windows job object cannot limit file sizes"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Of(tc.in, DefaultProcs)); diff != "" {
				t.Errorf("Of(%+v) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}
