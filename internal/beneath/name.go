package beneath

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"time"
)

// RandomName is 8 random hex digits: a name a command cannot make first.
func RandomName() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Stat is what Lstat says of an entry.
type Stat struct {
	Mode    fs.FileMode
	Size    int64
	Links   uint64
	ModTime time.Time
}
