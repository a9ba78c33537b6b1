//go:build !linux && !windows

package checkpoint

// pathMax is the length at which the kernel refuses an absolute path
// (PATH_MAX, with its terminating NUL, on macOS and the BSDs): ENAMETOOLONG.
const pathMax = 1024
