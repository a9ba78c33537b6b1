//go:build !unix

package checkpoint

// openNonblock: no FIFOs to wait on here.
const openNonblock = 0
