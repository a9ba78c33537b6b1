//go:build !linux

package inherit

import "os"

func pipe(childReads bool) (ours, child *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil || !childReads {
		return r, w, err
	}
	return w, r, nil
}
