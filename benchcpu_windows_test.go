package shellgate_test

import "time"

// cpuTime is not measured on Windows: benchmarks report no CPU ratio there.
func cpuTime() time.Duration { return 0 }

// selfCPU is not measured on Windows.
func selfCPU() time.Duration { return 0 }
