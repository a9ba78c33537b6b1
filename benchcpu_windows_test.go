package shellgate_test

import "time"

// cpuTime is not measured on Windows: benchmarks report no CPU ratio there.
func cpuTime() time.Duration { return 0 }
