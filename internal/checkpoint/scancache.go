package checkpoint

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"sync"
)

// The scan cache is what the last checkpoint saw: each file's stat and blob,
// each directory's tree. A process keeps it in memory; the file
// "scan-cache" of the store hands it to the next process (a one-shot run).
// Losing it costs one checkpoint that reads every file again, nothing else.
// The file is written once 64 files were read since it last was (an older
// one only makes the next process read again the files changed since), and
// before git's gc runs: then the cache is the checkpoint just recorded, so
// every object it names is one the gc keeps, and a file whose stat is still
// the cache's is still that blob.
//
// The file ends in a CRC-32C of all before it: a torn or damaged file is
// dropped whole (the next checkpoint reads every file), never half trusted —
// a flipped bit in a blob id would otherwise put a wrong file in a
// checkpoint without a word.

type scanCache struct {
	work, git *scanDir
}

// 3: a nested repository's .git is an entry of its directory (an
// older build would take it into the tree); 4: a file's flags say whether
// it was kept (an older build would take a stub for its content); 5: the
// sandbox's quarantine at the root is left out (an older cache holds it); 6:
// so is what it moved aside beside itself, and index files and todo lists
// may be kept as the guard would leave them; 7: ignored files kept by a
// hard link (an older build would take their stub for their content); 8: a
// file's number of names (hard links between the root's files are kept),
// and a linked file kept by the link of the version before it
const scanCacheMagic = "shellgate-scan-cache 8\n"

// castagnoli is built on first use, so that a process that never reads or
// writes the scan cache (a hook's `check`) does not build it as it starts.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

func (s *Store) scanCachePath() string { return filepath.Join(s.dir, "scan-cache") }

// loadScanCache reads the cache file when another process wrote it since
// this one last read or wrote it; it reports whether the cache in memory was
// replaced (so that the watch's account of what changed since does not
// hold).
func (s *Store) loadScanCache() bool {
	fi, err := os.Stat(s.scanCachePath())
	if err != nil {
		s.cache, s.cacheStat = scanCache{}, nil
		return true
	}
	if sameFileState(s.cacheStat, fi) {
		return false
	}
	s.cache, s.cacheStat = scanCache{}, nil
	b, err := os.ReadFile(s.scanCachePath())
	if err != nil {
		return true
	}
	c, ok := decodeScanCache(b, s.root)
	if !ok {
		return true
	}
	s.cache, s.cacheStat = c, fi
	return true
}

// saveScanCache writes the cache file (no sync: a lost one is only a slower
// checkpoint).
func (s *Store) saveScanCache() {
	s.unsaved = 0
	s.due.cache = false
	s.writeScanCache(encodeScanCache(s.cache, s.root))
}

// writeScanCache writes b, an encoded cache, as the cache file.
func (s *Store) writeScanCache(b []byte) {
	if err := writeFile(s.scanCachePath(), b, false); err != nil {
		s.cacheStat = nil
		return
	}
	s.cacheStat, _ = os.Stat(s.scanCachePath())
}

func encodeScanCache(c scanCache, root string) []byte {
	b := []byte(scanCacheMagic)
	b = binary.AppendUvarint(b, uint64(len(root)))
	b = append(b, root...)
	for _, d := range []*scanDir{c.work, c.git} {
		if d == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = encodeDir(b, d)
	}
	return binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli()))
}

func encodeDir(b []byte, d *scanDir) []byte {
	b = append(b, d.tree[:]...)
	b = binary.AppendUvarint(b, uint64(len(d.entries)))
	for i := range d.entries {
		e := &d.entries[i]
		b = binary.AppendUvarint(b, uint64(len(e.name)))
		b = append(b, e.name...)
		b = binary.AppendUvarint(b, uint64(e.mode))
		b = append(b, e.id[:]...)
		if e.mode == modeTree {
			b = encodeDir(b, e.dir)
			continue
		}
		b = binary.AppendVarint(b, e.st.size)
		b = binary.AppendVarint(b, e.st.mtime)
		b = binary.AppendVarint(b, e.st.ctime)
		b = binary.AppendUvarint(b, e.st.ino)
		b = binary.AppendUvarint(b, uint64(e.st.mode))
		b = binary.AppendUvarint(b, uint64(e.st.nlink))
		flags := byte(0)
		if e.racy {
			flags |= 1
		}
		if e.notKept {
			flags |= 2
		}
		if e.linked {
			flags |= 4
		}
		if e.noLink {
			flags |= 8
		}
		if e.via != nil {
			flags |= 16
		}
		if e.unreadable {
			flags |= 32
		}
		b = append(b, flags)
		if v := e.via; v != nil {
			b = binary.AppendUvarint(b, uint64(len(v.Link)))
			b = append(b, v.Link...)
			b = binary.AppendVarint(b, v.Size)
			b = binary.AppendVarint(b, v.Mtime)
			b = binary.AppendUvarint(b, v.Ino)
			b = binary.AppendUvarint(b, uint64(v.Perm))
		}
	}
	return b
}

type cacheReader struct {
	b   []byte
	err error
}

var errBadCache = errors.New("bad scan cache")

func (r *cacheReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = errBadCache, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *cacheReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err, r.b = errBadCache, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *cacheReader) bytes(n uint64) []byte {
	if uint64(len(r.b)) < n {
		r.err, r.b = errBadCache, nil
		return make([]byte, n&0xffff)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func decodeScanCache(b []byte, root string) (scanCache, bool) {
	var c scanCache
	if len(b) < len(scanCacheMagic)+4 || !bytes.HasPrefix(b, []byte(scanCacheMagic)) {
		return c, false
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli()) != sum {
		return c, false
	}
	r := &cacheReader{b: body[len(scanCacheMagic):]}
	if string(r.bytes(r.uvarint())) != root || r.err != nil {
		return c, false
	}
	for _, d := range []**scanDir{&c.work, &c.git} {
		flag := r.bytes(1)
		if r.err != nil {
			return scanCache{}, false
		}
		if flag[0] == 1 {
			*d = decodeDir(r, 0)
		}
	}
	if r.err != nil || len(r.b) != 0 {
		return scanCache{}, false
	}
	return c, true
}

func decodeDir(r *cacheReader, depth int) *scanDir {
	d := &scanDir{}
	if depth > 4096 {
		r.err = errBadCache
		return d
	}
	copy(d.tree[:], r.bytes(sha1.Size))
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.err = errBadCache
		return d
	}
	d.entries = make([]scanEntry, 0, n)
	for range n {
		if r.err != nil {
			return d
		}
		var e scanEntry
		e.name = string(r.bytes(r.uvarint()))
		e.mode = uint32(r.uvarint())
		copy(e.id[:], r.bytes(sha1.Size))
		if e.mode == modeTree {
			e.dir = decodeDir(r, depth+1)
		} else {
			e.st.size = r.varint()
			e.st.mtime = r.varint()
			e.st.ctime = r.varint()
			e.st.ino = r.uvarint()
			e.st.mode = os.FileMode(r.uvarint())
			e.st.nlink = uint32(r.uvarint())
			flags := r.bytes(1)[0]
			e.racy, e.notKept, e.linked, e.noLink, e.unreadable = flags&1 != 0, flags&2 != 0, flags&4 != 0, flags&8 != 0, flags&32 != 0
			if flags&16 != 0 {
				v := linkedFile{Link: string(r.bytes(r.uvarint())), Size: r.varint(), Mtime: r.varint(), Ino: r.uvarint(), Perm: uint32(r.uvarint()), Via: true}
				e.via = &v
			}
		}
		if e.mode == modeTree {
			d.repos += e.dir.repos
		}
		if e.name == ".git" {
			d.repos++
		}
		d.entries = append(d.entries, e)
	}
	return d
}
