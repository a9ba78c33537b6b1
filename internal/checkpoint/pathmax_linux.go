package checkpoint

// pathMax is the length at which the kernel refuses an absolute path
// (PATH_MAX, with its terminating NUL): ENAMETOOLONG.
const pathMax = 4096
