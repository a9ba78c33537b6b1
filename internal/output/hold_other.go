//go:build !unix

package output

import (
	"os"
	"time"
)

// holdDir does nothing where there is no flock: unowned goes by age alone.
func holdDir(*os.File) error { return nil }

// unowned reports whether the session directory dir is past the retention
// cutoff: without locks, an owner's directory is told by age alone.
func unowned(_ string, modified, cutoff time.Time) bool { return modified.Before(cutoff) }
