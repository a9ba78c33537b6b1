//go:build darwin || windows

package analysis

import "strings"

// FoldsNames reports that command names are matched without regard to case:
// the file systems of macOS and Windows find /bin/RM for "RM".
const FoldsNames = true

func foldName(s string) string {
	return strings.TrimSuffix(strings.ToLower(s), ".exe")
}
