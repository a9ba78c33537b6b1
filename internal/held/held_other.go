//go:build !unix

package held

import (
	"errors"
	"os"
)

// Supported: without flock, whether a directory is held cannot be told here.
const Supported = false

func lock(*os.File, bool) error { return errors.ErrUnsupported }
