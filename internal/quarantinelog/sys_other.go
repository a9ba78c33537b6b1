//go:build !unix

package quarantinelog

import "os"

// Only the Linux sandbox quarantines: elsewhere the log stays empty.
const noFollow = 0

func lock(*os.File) error { return nil }

func unlock(*os.File) {}

func identity(os.FileInfo) (dev, ino uint64) { return 0, 0 }
