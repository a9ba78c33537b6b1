//go:build darwin || windows

package analysis

import "strings"

// FoldsNames reports that the file system matches names without regard to
// case, as macOS's and Windows' do by default: /bin/RM runs for "RM", and
// /Work/Root/x is inside /work/root. Command names and paths alike fold.
const FoldsNames = true

func foldName(s string) string {
	return strings.TrimSuffix(strings.ToLower(s), ".exe")
}
