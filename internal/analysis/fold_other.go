//go:build !darwin && !windows

package analysis

// FoldsNames reports that command names are matched without regard to case.
const FoldsNames = false

func foldName(s string) string { return s }
