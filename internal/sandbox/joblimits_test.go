package sandbox

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestJobLimitsOf(t *testing.T) {
	const always = jobLimitKillOnClose | jobLimitDieOnException | jobLimitActiveProcess
	for _, tc := range []struct {
		name string
		in   Limits
		want jobLimitSet
	}{
		{"defaults", Limits{}, jobLimitSet{Flags: always, ActiveProcesses: DefaultProcs}},
		{"procs", Limits{Procs: 50}, jobLimitSet{Flags: always, ActiveProcesses: 50}},
		{"memory", Limits{Memory: 1 << 30}, jobLimitSet{Flags: always | jobLimitJobMemory, ActiveProcesses: DefaultProcs, JobMemory: 1 << 30}},
		{"cpu", Limits{CPUTime: 2 * time.Second}, jobLimitSet{Flags: always | jobLimitProcessTime, ActiveProcesses: DefaultProcs, ProcessUserTime: 20_000_000}},
		{"tiny cpu", Limits{CPUTime: time.Nanosecond}, jobLimitSet{Flags: always | jobLimitProcessTime, ActiveProcesses: DefaultProcs, ProcessUserTime: 1}},
		{"file size", Limits{FileSize: 1 << 20}, jobLimitSet{Flags: always, ActiveProcesses: DefaultProcs,
			Missing: []string{"file_size: a Windows job object cannot limit file sizes"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, jobLimitsOf(tc.in)); diff != "" {
				t.Errorf("jobLimitsOf(%+v) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}
