package checkpoint

import (
	"crypto/sha1"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// A file over Options.MaxFileSize (a sparse terabyte a command made with
// truncate -s 1T, a database, a core dump) is not read into a checkpoint:
// reading and hashing it would hold the store's lock for as long, and the
// store would grow by it. Its entry in the checkpoint's tree is a stub, a
// small blob of its stat (so that a later checkpoint whose stat differs
// tells it changed), and the manifest lists it (NotKeptWork, NotKeptGit):
// undo leaves such a file as it is, and says so; changes mark it.

// notKeptFile is what a checkpoint records of a file it did not keep.
type notKeptFile struct {
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime"` // nanoseconds
	Ctime int64  `json:"ctime"`
	Ino   uint64 `json:"ino,omitempty"`
	Perm  uint32 `json:"perm"`
	// Why it was not kept, when not for being over max_file_size: an
	// ignored file no hard link could be made to (whyNoLink).
	Why string `json:"why,omitempty"`
}

// whyUnreadable is the reason a not-kept record gives for a file its user
// cannot read.
const whyUnreadable = "unreadable (permission denied)"

// whyLong is the reason for a file, or a directory and all it holds, whose
// absolute path is too long to open (pathMax): the kernel refuses the path
// (ENAMETOOLONG), and undo could not write it back by that path either.
var whyLong = fmt.Sprintf("its path is too long to open (%d bytes or more)", pathMax)

func notKeptOf(st fileStat) notKeptFile {
	return notKeptFile{Size: st.size, Mtime: st.mtime, Ctime: st.ctime, Ino: st.ino, Perm: uint32(st.mode.Perm())}
}

// reason is why it was not kept, in a few words.
func (n notKeptFile) reason() string {
	if n.Why != "" {
		return n.Why
	}
	return "over max_file_size"
}

// notKeptStub is the blob a file not kept has in a checkpoint's tree.
func notKeptStub(st fileStat) []byte {
	n := notKeptOf(st)
	return fmt.Appendf(nil, "shellgate: not kept (%s)\nsize %d\nmtime %d\nctime %d\nino %d\nperm %o\n", n.reason(), n.Size, n.Mtime, n.Ctime, n.Ino, n.Perm)
}

// storeStub writes the stub of a file not kept.
func (s *Store) storeStub(st fileStat) ([sha1.Size]byte, error) {
	return s.storeBlob(notKeptStub(st))
}

// notKept reports whether checkpoint path p (work/…, git/…, nested/…) is a
// file the manifest m lists as not kept, and what it recorded.
func (m *manifest) notKept(p string) (notKeptFile, bool) {
	var tab map[string]notKeptFile
	var key string
	switch {
	case len(p) > 4 && p[:4] == "git/":
		tab, key = m.NotKeptGit, p[4:]
	default:
		tab, key = m.NotKeptWork, workPath(p)
	}
	if key == "" || tab == nil {
		return notKeptFile{}, false
	}
	n, ok := tab[key]
	return n, ok
}

// ShowSize is a size in a few characters: "1.0 TiB", "300 MiB", "12 KiB".
func ShowSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), 0
	for f >= unit && i < 6 {
		f /= unit
		i++
	}
	s := fmt.Sprintf("%.1f", f)
	if f >= 10 {
		s = fmt.Sprintf("%.0f", f)
	}
	return s + " " + "KMGTPE"[i-1:i] + "iB"
}

// rootPath is the root's path (slash-separated) of checkpoint path p, as
// a Change names it: work/x is x, git/x is .git/x, a nested repository's
// .git's is vendor/lib/.git/x.
func rootPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "git/"); ok {
		return ".git/" + rest
	}
	return workPath(p)
}

// notKeptSkips drops from entries, the difference from checkpoint cur (the
// root now; its manifest now) to the one an undo puts back (target), what
// the undo leaves as it is, and says why: a file not kept then or now is
// neither written nor deleted — one not kept now would be lost for good,
// since the undo's own checkpoint does not hold it either, and one not kept
// then has nothing to be put back from — and nothing is written where it
// would remove one (a file not kept in the way of a directory, or a
// directory holding one).
// bigWhy is why the root's file p (a path of the root) was not kept in m.
func bigWhy(m manifest, p string) string {
	n, ok := m.NotKeptWork[p]
	if g, isGit := strings.CutPrefix(p, ".git/"); isGit {
		n, ok = m.NotKeptGit[g]
	}
	if !ok {
		return "over max_file_size"
	}
	return n.reason()
}

func notKeptSkips(entries []diffEntry, now, target manifest) ([]diffEntry, []NotRestored) {
	if len(now.NotKeptWork)+len(now.NotKeptGit)+len(target.NotKeptWork)+len(target.NotKeptGit) == 0 {
		return entries, nil
	}
	var big []string // the root's files not kept now
	for p := range now.NotKeptWork {
		big = append(big, p)
	}
	for p := range now.NotKeptGit {
		big = append(big, ".git/"+p)
	}
	sort.Strings(big)
	var left []NotRestored
	out := entries[:0:0]
	for _, e := range entries {
		if e.path == "modes" || e.path == "gitfile" {
			out = append(out, e)
			continue
		}
		p := rootPath(e.path)
		n, isNow := now.notKept(e.path)
		t, was := target.notKept(e.path)
		var why string
		switch {
		case isNow && was:
			why = fmt.Sprintf("%s (%s now, %s then): not kept, so left as it is", n.reason(), ShowSize(n.Size), ShowSize(t.Size))
		case isNow && e.status == 'D':
			why = fmt.Sprintf("made since, %s, %s: not kept, so left as it is rather than lost", ShowSize(n.Size), n.reason())
		case isNow:
			why = fmt.Sprintf("now %s, %s: not kept, so left as it is rather than lost (what it held before is in the checkpoint)", ShowSize(n.Size), n.reason())
		case was && e.status == 'A':
			why = fmt.Sprintf("was %s, %s: not kept, so it cannot be brought back", ShowSize(t.Size), t.reason())
		case was:
			why = fmt.Sprintf("was %s, %s: not kept, so it cannot be put back; what is there now is left as it is", ShowSize(t.Size), t.reason())
		case e.status != 'D':
			for _, b := range big {
				switch {
				case strings.HasPrefix(p, b+"/"):
					why = fmt.Sprintf("%s, a file checkpoints do not keep (%s), is where its directory would be: left as it is", b, bigWhy(now, b))
				case strings.HasPrefix(b, p+"/"):
					why = fmt.Sprintf("the directory holds %s, a file checkpoints do not keep (%s): left as it is", b, bigWhy(now, b))
				}
				if why != "" {
					break
				}
			}
		}
		if why == "" {
			out = append(out, e)
			continue
		}
		left = append(left, NotRestored{Path: p, Why: why})
	}
	sort.Slice(left, func(i, j int) bool { return left[i].Path < left[j].Path })
	return out, left
}

// leaveOut takes out of an undo's summary the paths it left as they are,
// and lists them in NotRestored.
func (s *Summary) leaveOut(left []NotRestored) {
	if len(left) == 0 {
		return
	}
	skip := map[string]bool{}
	for _, l := range left {
		skip[l.Path] = true
	}
	keep := s.Changes[:0]
	for _, c := range s.Changes {
		if !skip[c.Path] {
			keep = append(keep, c)
			continue
		}
		switch {
		case strings.Contains("/"+c.Path+"/", "/.git/"):
			s.Git--
		case c.Kind == Added:
			s.Added--
		case c.Kind == Deleted:
			s.Deleted--
		case c.Kind == Modified:
			s.Modified--
		case c.Kind == Mode:
			s.Mode--
		}
	}
	s.Changes = keep
	s.Later = slices.DeleteFunc(s.Later, func(c Change) bool { return skip[c.Path] }) // left as they are: not taken back
	s.NotRestored = append(s.NotRestored, left...)
}
