//go:build !darwin && !windows

package analysis

// FoldsNames reports that the file system matches names without regard to
// case (see fold_insensitive.go): not here.
const FoldsNames = false

func foldName(s string) string { return s }
