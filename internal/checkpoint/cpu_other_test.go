//go:build !unix

package checkpoint_test

import "time"

func cpuTime() time.Duration { return 0 }

func procCPU(int) time.Duration { return 0 }
