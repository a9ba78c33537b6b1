package sandbox

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// gitIndex is what the sandbox needs of a git index (the .git/index file):
// the paths of its gitlinks — entries for a nested repository, which git on
// the host walks into (`git status` runs `git status` there, with that
// repository's own config) — and, for a split index, the shared index's name.
type gitIndex struct {
	gitlinks []string
	shared   string // "sharedindex.<hash>" in the same directory, or ""
}

const (
	gitlinkMode  = 0o160000
	maxIndexPath = 1 << 16 // longer than any path a filesystem takes
	// maxIndexSize is more than any real index (Chromium's is ~40 MB): one
	// larger, or a sparse one claiming billions of entries, is not read.
	maxIndexSize = 256 << 20
	// maxGitlinkBytes bounds the gitlink paths kept from one index.
	maxGitlinkBytes = 16 << 20
	// pathMax: git cannot lstat a longer path, so never walks into it.
	pathMax = 4096
)

// readGitIndex reads an index of format version 2, 3 or 4, size bytes long,
// with object names of hashSize bytes (20 for SHA-1, 32 for SHA-256). It
// streams: memory stays small however large the index. Anything it cannot
// follow is an error, never a guess, so a caller can fail closed.
func readGitIndex(r io.Reader, size int64, hashSize int) (gitIndex, error) {
	var idx gitIndex
	counted := &countingReader{r: r}
	br := bufio.NewReaderSize(counted, 64<<10)
	left := func() int64 { return size - (counted.n - int64(br.Buffered())) }
	var head [12]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return idx, fmt.Errorf("git index: header: %w", err)
	}
	if string(head[:4]) != "DIRC" {
		return idx, errors.New("git index: no DIRC signature")
	}
	version := binary.BigEndian.Uint32(head[4:8])
	if version < 2 || version > 4 {
		return idx, fmt.Errorf("git index: version %d", version)
	}
	count := binary.BigEndian.Uint32(head[8:12])
	// ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each), name, flags (2).
	fixed := 40 + hashSize + 2
	if size > maxIndexSize || int64(count)*int64(fixed+2) > size {
		return idx, fmt.Errorf("git index: %d entries in %d bytes: too large or not what it claims", count, size)
	}
	linkBytes := 0
	// Where each entry starts: git reads them from these offsets when the
	// index has an entry offset table (IEOT), which must agree.
	starts := make([]uint32, 0, min(count, 1<<16))
	offset := func() int64 { return size - left() }
	entry := make([]byte, fixed+2)
	var path []byte // the previous entry's path: version 4 shares its prefix
	for i := uint32(0); i < count; i++ {
		starts = append(starts, uint32(offset()))
		if _, err := io.ReadFull(br, entry[:fixed]); err != nil {
			return idx, fmt.Errorf("git index: entry %d: %w", i, err)
		}
		size := fixed
		mode := binary.BigEndian.Uint32(entry[24:28])
		flags := binary.BigEndian.Uint16(entry[fixed-2 : fixed])
		if flags&0x4000 != 0 { // extended: two more bytes of flags
			if version < 3 {
				return idx, fmt.Errorf("git index: entry %d: extended flags in version %d", i, version)
			}
			if _, err := io.ReadFull(br, entry[fixed:fixed+2]); err != nil {
				return idx, fmt.Errorf("git index: entry %d: %w", i, err)
			}
			size += 2
		}
		if version == 4 {
			strip, err := gitVarint(br)
			if err != nil || strip > uint64(len(path)) {
				return idx, fmt.Errorf("git index: entry %d: bad path prefix", i)
			}
			path = path[:len(path)-int(strip)]
		} else {
			path = path[:0]
		}
		suffix, err := br.ReadSlice(0)
		for errors.Is(err, bufio.ErrBufferFull) && len(path)+len(suffix) <= maxIndexPath {
			path = append(path, suffix...)
			suffix, err = br.ReadSlice(0)
		}
		if err != nil {
			return idx, fmt.Errorf("git index: entry %d: path: %v", i, err)
		}
		path = append(path, suffix[:len(suffix)-1]...)
		if len(path) > maxIndexPath {
			return idx, fmt.Errorf("git index: entry %d: path too long", i)
		}
		if version < 4 {
			// NULs pad the entry to a multiple of 8 bytes; one is read already.
			size += len(path) + 1
			if pad := (8 - size%8) % 8; pad > 0 {
				if _, err := br.Discard(pad); err != nil {
					return idx, fmt.Errorf("git index: entry %d: %w", i, err)
				}
			}
		}
		if mode&0o170000 == gitlinkMode && len(path) < pathMax {
			if linkBytes += len(path); linkBytes > maxGitlinkBytes {
				return idx, errors.New("git index: too many gitlinks")
			}
			idx.gitlinks = append(idx.gitlinks, string(path))
		}
	}
	// Extensions follow, each a signature and a size, as long as more than
	// the trailing checksum is left (as git reads them); only "link" matters.
	endOfEntries := offset()
	var ext [8]byte
	for left() >= int64(hashSize)+8 {
		if _, err := io.ReadFull(br, ext[:]); err != nil {
			return idx, fmt.Errorf("git index: extension: %w", err)
		}
		sig, n := string(ext[:4]), binary.BigEndian.Uint32(ext[4:])
		switch sig {
		case "IEOT", "EOIE":
			if n > 1<<26 {
				return idx, fmt.Errorf("git index: %s extension of %d bytes", sig, n)
			}
			body := make([]byte, n)
			if _, err := io.ReadFull(br, body); err != nil {
				return idx, fmt.Errorf("git index: %s extension: %w", sig, err)
			}
			if err := offsetsAgree(sig, body, starts, endOfEntries); err != nil {
				return idx, err
			}
			continue
		}
		if sig == "link" {
			if n < uint32(hashSize) {
				return idx, errors.New("git index: short link extension")
			}
			oid := make([]byte, hashSize)
			if _, err := io.ReadFull(br, oid); err != nil {
				return idx, fmt.Errorf("git index: link extension: %w", err)
			}
			idx.shared = fmt.Sprintf("sharedindex.%x", oid)
			n -= uint32(hashSize)
		}
		if _, err := br.Discard(int(n)); err != nil {
			return idx, fmt.Errorf("git index: extension %q: %w", sig, err)
		}
	}
	if left() < int64(hashSize) {
		return idx, errors.New("git index: no checksum at the end")
	}
	return idx, nil
}

// offsetsAgree checks an extension that tells git where to read from — EOIE,
// where the extensions start; IEOT, where each block of entries does, for
// threads to read them — against where the entries and extensions are when
// read one after another, as here. Where they differ git would read another
// index than this reading: an error.
func offsetsAgree(sig string, body []byte, starts []uint32, endOfEntries int64) error {
	if sig == "EOIE" {
		if len(body) < 4 || int64(binary.BigEndian.Uint32(body)) != endOfEntries {
			return errors.New("git index: the EOIE extension does not point at the end of the entries")
		}
		return nil
	}
	if len(body) < 4 || binary.BigEndian.Uint32(body) != 1 || (len(body)-4)%8 != 0 {
		return errors.New("git index: an IEOT extension of an unknown form")
	}
	next := 0
	for b := body[4:]; len(b) > 0; b = b[8:] {
		off, n := binary.BigEndian.Uint32(b), int(binary.BigEndian.Uint32(b[4:]))
		if next >= len(starts) || starts[next] != off || n > len(starts)-next {
			return errors.New("git index: the IEOT extension does not match the entries")
		}
		next += n
	}
	if next != len(starts) {
		return errors.New("git index: the IEOT extension does not cover the entries")
	}
	return nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// gitVarint reads git's offset varint (varint.c): each continuation adds one
// before shifting, so every value has a single spelling.
func gitVarint(br *bufio.Reader) (uint64, error) {
	c, err := br.ReadByte()
	if err != nil {
		return 0, err
	}
	v := uint64(c & 0x7f)
	for c&0x80 != 0 {
		if c, err = br.ReadByte(); err != nil {
			return 0, err
		}
		if v+1 > 1<<56 {
			return 0, errors.New("varint overflows")
		}
		v = (v+1)<<7 | uint64(c&0x7f)
	}
	return v, nil
}
