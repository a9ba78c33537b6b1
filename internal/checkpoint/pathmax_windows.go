package checkpoint

// pathMax: Go opens a long path on Windows as \\?\ path, up to 32 767
// characters.
const pathMax = 32767
