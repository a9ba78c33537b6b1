package checkpoint

import (
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// snapState is a checkpoint this process took, as its walk left it: what
// changed between two of them is read from memory, without git.
type snapState struct {
	top       string
	work, git *scanDir
	modes     manifest
	gitfile   string // the blob of a .git file, if the root had one
}

// recentSnaps is how many checkpoints a process remembers (a command needs
// the one before it and the one after).
const recentSnaps = 4

func (s *Store) remember(top string, st snapState) {
	st.top = top
	keep := s.recent[:0]
	for _, r := range s.recent {
		if r.top != top {
			keep = append(keep, r)
		}
	}
	s.recent = append(keep, st)
	if len(s.recent) > recentSnaps {
		s.recent = append([]snapState(nil), s.recent[len(s.recent)-recentSnaps:]...)
	}
}

func (s *Store) recalled(top string) *snapState {
	for i := range s.recent {
		if s.recent[i].top == top {
			return &s.recent[i]
		}
	}
	return nil
}

const zeroID = "0000000000000000000000000000000000000000"

// diffSnaps is git diff-tree -r of two remembered checkpoints.
func diffSnaps(a, b *snapState) []diffEntry {
	var out []diffEntry
	diffDirs(&out, "git/", a.git, b.git)
	if a.gitfile != b.gitfile {
		out = append(out, blobChange("gitfile", a.gitfile, b.gitfile))
	}
	if a.modes.blob != b.modes.blob {
		out = append(out, blobChange("modes", a.modes.blob, b.modes.blob))
	}
	diffDirs(&out, "work/", a.work, b.work)
	return out
}

func blobChange(path, a, b string) diffEntry {
	e := diffEntry{oldMode: "100644", newMode: "100644", oldID: a, newID: b, status: 'M', path: path}
	switch {
	case a == "":
		e.oldMode, e.oldID, e.status = "000000", zeroID, 'A'
	case b == "":
		e.newMode, e.newID, e.status = "000000", zeroID, 'D'
	}
	return e
}

func entriesOf(d *scanDir) []scanEntry {
	if d == nil {
		return nil
	}
	return d.entries
}

func diffDirs(out *[]diffEntry, prefix string, a, b *scanDir) {
	// (a directory's tree leaves its nested repositories' .git out)
	if a != nil && b != nil && a.tree == b.tree && len(a.entries) > 0 && len(b.entries) > 0 && a.repos == 0 && b.repos == 0 {
		return
	}
	ea, eb := entriesOf(a), entriesOf(b)
	for len(ea) > 0 || len(eb) > 0 {
		switch {
		case len(eb) == 0 || len(ea) > 0 && ea[0].name < eb[0].name:
			gone(out, prefix, &ea[0], 'D')
			ea = ea[1:]
		case len(ea) == 0 || eb[0].name < ea[0].name:
			gone(out, prefix, &eb[0], 'A')
			eb = eb[1:]
		default:
			x, y := &ea[0], &eb[0]
			ea, eb = ea[1:], eb[1:]
			switch {
			case x.mode == modeTree && y.mode == modeTree:
				if x.id != y.id || x.dir != nil && x.dir.repos > 0 || y.dir != nil && y.dir.repos > 0 {
					diffDirs(out, entryPath(prefix, x.name)+"/", x.dir, y.dir)
				}
			case x.mode == modeTree || y.mode == modeTree:
				gone(out, prefix, x, 'D')
				gone(out, prefix, y, 'A')
			case x.mode != y.mode || x.id != y.id:
				status := byte('M')
				if x.mode&0o170000 != y.mode&0o170000 {
					status = 'T'
				}
				*out = append(*out, diffEntry{oldMode: fmt.Sprintf("%06o", x.mode), newMode: fmt.Sprintf("%06o", y.mode),
					oldID: hex.EncodeToString(x.id[:]), newID: hex.EncodeToString(y.id[:]), status: status, path: entryPath(prefix, x.name)})
			}
		}
	}
}

// entryPath is the checkpoint's path of entry name of the directory whose
// entries' paths start with prefix: a nested repository's .git is in the
// "nested" tree, as the checkpoint's tree has it.
func entryPath(prefix, name string) string {
	if name == ".git" && len(prefix) > len("work/") && strings.HasPrefix(prefix, "work/") {
		return "nested/" + nestedName(prefix[len("work/"):len(prefix)-1])
	}
	return prefix + name
}

// gone lists e (and all beneath, for a directory) as added or deleted.
func gone(out *[]diffEntry, prefix string, e *scanEntry, status byte) {
	if e.mode == modeTree {
		if e.dir != nil {
			for i := range e.dir.entries {
				gone(out, entryPath(prefix, e.name)+"/", &e.dir.entries[i], status)
			}
		}
		return
	}
	mode, id := fmt.Sprintf("%06o", e.mode), hex.EncodeToString(e.id[:])
	d := diffEntry{oldMode: mode, newMode: "000000", oldID: id, newID: zeroID, status: status, path: entryPath(prefix, e.name)}
	if status == 'A' {
		d.oldMode, d.newMode, d.oldID, d.newID = "000000", mode, zeroID, id
	}
	*out = append(*out, d)
}

// sameFileState reports a file unchanged since a was taken of it.
func sameFileState(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
