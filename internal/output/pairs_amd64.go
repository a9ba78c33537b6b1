//go:build !purego

package output

// pairScan returns the offset i of the first 16 bytes of b, among those
// followed by a 17th, where a word's first two letters may start, and mask,
// bit k set for b[i+k]; mask 0 and i where the scan stopped (fewer than 17
// bytes left) if there is none. Here in SSE2 (pairs_amd64.s), which every
// amd64 processor has: sixteen positions a step at a third of the
// instructions of pairs_other.go's eight, the bytes of a capture's middle
// pass through it as fast as the pipe delivers them.
//
//go:noescape
func pairScan(b []byte) (i int, mask uint32)
