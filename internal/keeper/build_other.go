//go:build !unix

package keeper

import (
	"fmt"
	"os"
)

func fileID(fi os.FileInfo) string { return fmt.Sprint(fi.Size()) }
