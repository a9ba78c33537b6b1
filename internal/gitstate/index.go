// Package gitstate keeps what a sandboxed command leaves in a repository's
// git directory from acting on the user's own git later: index entries and
// flags the session did not start with (a gitlink makes git status in the
// root run the config of the repository it names; skip-worktree and
// assume-unchanged hide changes from git status and git diff), and exec
// lines in a sequencer's todo list (the user's `git rebase --continue` runs
// them outside the sandbox). It compares with what the session started with
// or an approved command left, not with rules about content: anything new is
// undone or moved aside, and told.
package gitstate

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
)

// On-disk entry flags (gitformat-index(5)).
const (
	flagValid    = 0x8000 // assume-unchanged
	flagExtended = 0x4000
	flagStage    = 0x3000
	nameMask     = 0x0fff

	// The second flags word, present when flagExtended is set.
	extSkipWorktree = 0x4000
	extIntentToAdd  = 0x2000
	extKnown        = extSkipWorktree | extIntentToAdd
)

// Modes by type.
const (
	modeType    = 0o170000
	modeGitlink = 0o160000
	modeDir     = 0o040000 // a sparse index's directory entry
)

// statSize is the entry's fixed part before the object name: ctime, mtime,
// dev, ino, mode, uid, gid and size, 32 bits each.
const statSize = 40

// Entry is one index entry.
type Entry struct {
	Path         string
	Mode         uint32
	Stage        int
	AssumeValid  bool // assume-unchanged
	SkipWorktree bool
	intentToAdd  bool
	fixed        []byte // stat data and object name, as read
}

// Gitlink reports whether e names a commit of another repository (a
// submodule), into which git status recurses.
func (e *Entry) Gitlink() bool { return e.Mode&modeType == modeGitlink }

// SparseDir reports whether e is a sparse index's directory entry.
func (e *Entry) SparseDir() bool { return e.Mode&modeType == modeDir }

// Extension is one index extension, by its signature.
type Extension struct {
	Sig  string
	Data []byte
}

// Index is a parsed index file: git's read-cache.c, in versions 2 to 4, with
// SHA-1 or SHA-256 object names.
type Index struct {
	Version    uint32
	HashSize   int // 20 (SHA-1) or 32 (SHA-256)
	Entries    []Entry
	Extensions []Extension
	skipHash   bool // the trailer is zeros (index.skipHash)
	size       int  // of the file read
	partial    bool // Scan's: only the flagged entries
}

// Split reports whether ix is a split index's main file (a "link" extension),
// whose entries are completed from a shared index elsewhere.
func (ix *Index) Split() bool {
	for _, x := range ix.Extensions {
		if x.Sig == "link" {
			return true
		}
	}
	return false
}

// Parse reads an index file. The object name width is the one whose checksum
// matches the trailer; a zero trailer (index.skipHash) takes the width with
// which the file parses to its end.
func Parse(data []byte) (*Index, error) { return read(data, false) }

// Scan is Parse keeping only the entries Flagged says, for a look that
// allocates little: what it returns cannot be encoded.
func Scan(data []byte) (*Index, error) { return read(data, true) }

func read(data []byte, flaggedOnly bool) (*Index, error) {
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return nil, errors.New("index: no DIRC signature")
	}
	var firstErr error
	for _, hs := range []int{sha1.Size, sha256.Size} {
		if len(data) < 12+hs {
			continue
		}
		body, trailer := data[:len(data)-hs], data[len(data)-hs:]
		zero := bytes.Count(trailer, []byte{0}) == hs
		if !zero && !bytes.Equal(sum(hs, body), trailer) {
			continue
		}
		ix, err := parse(body, hs, flaggedOnly)
		if err == nil {
			ix.skipHash, ix.size = zero, len(data)
			return ix, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, errors.New("index: checksum does not match")
}

func sum(hashSize int, b []byte) []byte {
	var h hash.Hash = sha1.New()
	if hashSize == sha256.Size {
		h = sha256.New()
	}
	h.Write(b)
	return h.Sum(nil)
}

// parse reads the header, entries and extensions of body (the file without
// its trailer); with flaggedOnly, it keeps only the entries Flagged says,
// allocating nothing for the others.
func parse(body []byte, hs int, flaggedOnly bool) (*Index, error) {
	ix := &Index{Version: binary.BigEndian.Uint32(body[4:8]), HashSize: hs, partial: flaggedOnly}
	if ix.Version < 2 || ix.Version > 4 {
		return nil, fmt.Errorf("index: version %d", ix.Version)
	}
	n := binary.BigEndian.Uint32(body[8:12])
	if uint64(n) > uint64(len(body))/uint64(statSize+hs+3) {
		return nil, fmt.Errorf("index: %d entries cannot fit in %d bytes", n, len(body))
	}
	if !flaggedOnly {
		ix.Entries = make([]Entry, 0, n)
	}
	off := 12
	var name []byte // the last entry's, which version 4 names build on
	for i := uint32(0); i < n; i++ {
		e, size, err := parseEntry(body[off:], ix.Version, hs, &name, i > 0)
		if err != nil {
			return nil, fmt.Errorf("index: entry %d: %w", i, err)
		}
		if !flaggedOnly || e.Flagged() {
			e.Path = string(name)
			ix.Entries = append(ix.Entries, e)
		}
		off += size
	}
	// Extensions while a header fits, as git reads them; git ignores what
	// is left after them.
	for len(body)-off >= 8 {
		sig := string(body[off : off+4])
		size := binary.BigEndian.Uint32(body[off+4 : off+8])
		if uint64(size) > uint64(len(body)-off-8) {
			return nil, fmt.Errorf("index: extension %q overruns the file", sig)
		}
		if sig[0] < 'A' || sig[0] > 'Z' {
			switch sig {
			case "link", "sdir":
			default: // git refuses an index with a required extension it does not know
				return nil, fmt.Errorf("index: unknown required extension %q", sig)
			}
		}
		ix.Extensions = append(ix.Extensions, Extension{Sig: sig, Data: body[off+8 : off+8+int(size)]})
		off += 8 + int(size)
	}
	return ix, nil
}

// Flagged reports whether e is one a session may not add unseen: a gitlink,
// a sparse directory, or an entry git assumes unchanged or skips.
func (e *Entry) Flagged() bool {
	return e.Gitlink() || e.SparseDir() || e.AssumeValid || e.SkipWorktree
}

// parseEntry reads one entry as git's create_from_disk does, returning it
// (without its Path: its name is left in *name) and its size on disk.
func parseEntry(b []byte, version uint32, hs int, name *[]byte, hasPrev bool) (Entry, int, error) {
	fixed := statSize + hs
	if len(b) < fixed+2 {
		return Entry{}, 0, errors.New("truncated")
	}
	e := Entry{fixed: b[:fixed], Mode: binary.BigEndian.Uint32(b[24:28])}
	flags := binary.BigEndian.Uint16(b[fixed:])
	e.AssumeValid = flags&flagValid != 0
	e.Stage = int(flags&flagStage) >> 12
	nameAt := fixed + 2
	if flags&flagExtended != 0 {
		if len(b) < nameAt+2 {
			return Entry{}, 0, errors.New("truncated")
		}
		ext := binary.BigEndian.Uint16(b[nameAt:])
		if ext&^extKnown != 0 {
			return Entry{}, 0, fmt.Errorf("unknown extended flags %#04x", ext)
		}
		e.SkipWorktree, e.intentToAdd = ext&extSkipWorktree != 0, ext&extIntentToAdd != 0
		nameAt += 2
	}
	length := int(flags & nameMask)
	if version == 4 {
		strip, used, err := decodeVarint(b[nameAt:])
		if err != nil {
			return Entry{}, 0, err
		}
		nameAt += used
		keep := 0
		if hasPrev {
			if strip > uint64(len(*name)) {
				return Entry{}, 0, errors.New("malformed name field")
			}
			keep = len(*name) - int(strip)
		}
		if length == nameMask {
			end := bytes.IndexByte(b[nameAt:], 0)
			if end < 0 {
				return Entry{}, 0, errors.New("unterminated name")
			}
			length = end + keep
		}
		if length < keep || len(b) < nameAt+length-keep+1 {
			return Entry{}, 0, errors.New("truncated name")
		}
		*name = append((*name)[:keep], b[nameAt:nameAt+length-keep]...)
		return e, nameAt + length - keep + 1, nil
	}
	if length == nameMask {
		end := bytes.IndexByte(b[nameAt:], 0)
		if end < 0 {
			return Entry{}, 0, errors.New("unterminated name")
		}
		length = end
	}
	size := entrySize(nameAt-fixed, hs, length)
	if len(b) < size {
		return Entry{}, 0, errors.New("truncated name")
	}
	*name = b[nameAt : nameAt+length]
	return e, size, nil
}

// entrySize is a version 2 or 3 entry's size on disk: the name is followed
// by one to eight NULs, to a multiple of eight bytes (ondisk_ce_size).
func entrySize(flagBytes, hs, nameLen int) int {
	return (statSize + hs + flagBytes + nameLen + 8) &^ 7
}

// decodeVarint reads git's offset varint (varint.c), which is not LEB128:
// each continuation adds one before shifting.
func decodeVarint(b []byte) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, errors.New("truncated varint")
	}
	c := b[0]
	val := uint64(c & 127)
	i := 1
	for c&128 != 0 {
		val++
		if val == 0 || val>>57 != 0 {
			return 0, 0, errors.New("varint overflow")
		}
		if i >= len(b) {
			return 0, 0, errors.New("truncated varint")
		}
		c = b[i]
		i++
		val = val<<7 + uint64(c&127)
	}
	return val, i, nil
}

func encodeVarint(v uint64) []byte {
	var buf [16]byte
	pos := len(buf) - 1
	buf[pos] = byte(v & 127)
	for v >>= 7; v != 0; v >>= 7 {
		v--
		pos--
		buf[pos] = 128 | byte(v&127)
	}
	return buf[pos:]
}

// Encode writes ix as git would read it back: the entries as they are now,
// the TREE extension invalidated along the paths of dropped (the cached
// trees that held them), and without the caches that number entries or
// list untracked files (FSMN, UNTR, EOIE, IEOT, unknown optional ones),
// which git rebuilds: they describe the entries as they were.
func (ix *Index) Encode(dropped []string) ([]byte, error) {
	if ix.Split() {
		return nil, errors.New("index: a split index cannot be rewritten here")
	}
	if ix.partial {
		return nil, errors.New("index: a scanned index cannot be encoded")
	}
	out := make([]byte, 0, ix.size)
	out = append(out, "DIRC"...)
	out = binary.BigEndian.AppendUint32(out, ix.Version)
	out = binary.BigEndian.AppendUint32(out, uint32(len(ix.Entries)))
	prev := ""
	for i := range ix.Entries {
		e := &ix.Entries[i]
		if len(e.fixed) != statSize+ix.HashSize {
			return nil, fmt.Errorf("index: entry %q has no stat data", e.Path)
		}
		out = append(out, e.fixed...)
		flags := uint16(min(len(e.Path), nameMask)) | uint16(e.Stage&3)<<12
		if e.AssumeValid {
			flags |= flagValid
		}
		var ext uint16
		if e.SkipWorktree {
			ext |= extSkipWorktree
		}
		if e.intentToAdd {
			ext |= extIntentToAdd
		}
		flagBytes := 2
		if ext != 0 {
			flags |= flagExtended
			flagBytes = 4
		}
		out = binary.BigEndian.AppendUint16(out, flags)
		if ext != 0 {
			out = binary.BigEndian.AppendUint16(out, ext)
		}
		if ix.Version == 4 {
			common := 0
			for common < len(prev) && common < len(e.Path) && prev[common] == e.Path[common] {
				common++
			}
			out = append(out, encodeVarint(uint64(len(prev)-common))...)
			out = append(out, e.Path[common:]...)
			out = append(out, 0)
			prev = e.Path
			continue
		}
		out = append(out, e.Path...)
		pad := entrySize(flagBytes, ix.HashSize, len(e.Path)) - (statSize + ix.HashSize + flagBytes + len(e.Path))
		out = append(out, make([]byte, pad)...)
	}
	for _, x := range ix.Extensions {
		data := x.Data
		switch {
		case x.Sig == "TREE":
			var err error
			if data, err = invalidateTree(data, ix.HashSize, dropped); err != nil {
				return nil, err
			}
		case x.Sig == "REUC", x.Sig == "sdir":
		default:
			continue
		}
		out = append(out, x.Sig...)
		out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
		out = append(out, data...)
	}
	body := out
	if ix.skipHash {
		return append(body, make([]byte, ix.HashSize)...), nil
	}
	return append(body, sum(ix.HashSize, body)...), nil
}
