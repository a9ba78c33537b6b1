//go:build !amd64 || purego

package output

import "encoding/binary"

// pairScan returns the offset i of the first 16 bytes of b, among those
// followed by a 17th, where a word's first two letters may start, and mask,
// bit k set for b[i+k]; mask 0 and i where the scan stopped (fewer than 17
// bytes left) if there is none.
func pairScan(b []byte) (i int, mask uint32) {
	for ; i+17 <= len(b); i += 16 {
		if m := pairs8(b[i:]) | pairs8(b[i+8:])<<8; m != 0 {
			return i, m
		}
	}
	return i, 0
}

// pairs8 sets bit k where one of the pairs (er, ex, tr, wa, fa, pa) may
// start at b[k], k < 8, from two words of eight bytes with no branch (a
// byte at a time, the branch on each 'e' or 't' missed often enough to cost
// more than the look itself). b holds at least 9 bytes.
func pairs8(b []byte) uint32 {
	x := binary.LittleEndian.Uint64(b) | fold
	y := binary.LittleEndian.Uint64(b[1:]) | fold
	r := has(y, 'r')
	m := (has(x, 'e')&(r|has(y, 'x')) |
		(has(x, 'w')|has(x, 'f')|has(x, 'p'))&has(y, 'a') |
		has(x, 't')&r) & tops
	// The top bit of each byte k to bit k: one multiplication gathers them.
	return uint32((m >> 7) * 0x0102040810204080 >> 56)
}

// has marks with its top bit each byte of x equal to c, and perhaps bytes
// above one that is (a borrow), never missing one; its other bits mean
// nothing until masked with tops, which pairs8 does once for all of them.
func has(x uint64, c byte) uint64 {
	v := x ^ (ones * uint64(c))
	return (v - ones) &^ v
}

const ones, tops = 0x0101010101010101, 0x8080808080808080

// fold sets the bit that makes an ASCII capital letter small, in every byte;
// other bytes change too, which can only mark more bytes for startsWord.
const fold = 0x2020202020202020
