package checkpoint

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Change kinds.
const (
	Added    = "added"
	Modified = "modified"
	Deleted  = "deleted"
	Mode     = "mode" // only the mode (permissions, file ↔ symlink) changed
	// Ignored: a file the earlier checkpoint kept that the later one leaves
	// out because the ignore rules changed in between (`echo data/ >>
	// .gitignore`): not deleted, no longer checkpointed.
	Ignored = "ignored"
)

// Change is one path that differs between two checkpoints.
type Change struct {
	Kind string `json:"kind"`
	Path string `json:"path"` // relative to the root, slash-separated; .git's start with ".git/" (a nested repository's: "vendor/lib/.git/")
	// NotKept: the file is over the size checkpoints keep (max_file_size)
	// on one side or both: its content is in neither, and undo leaves it
	// as it is. Size is its stat size (the newer side's).
	NotKept bool  `json:"not_kept,omitempty"`
	Size    int64 `json:"size,omitempty"`
	// Why it was not kept, when not for max_file_size: an ignored file no
	// hard link could be made to in the store (another file system).
	Why string `json:"why,omitempty"`
	// InPlace: an ignored file kept by a hard link in the store, written
	// in place (the store's name is the same file, so it holds what was
	// written): undo cannot put back what it held. Size is its new size.
	InPlace bool `json:"in_place,omitempty"`
}

// Text is the change in a few words: "added big.img (not kept, 1.0 TiB)".
func (c Change) Text() string {
	return c.Kind + " " + ShowPath(c.Path) + c.Note()
}

// Note is what Text says after the path of a file not kept, or written in
// place: " (not kept, 1.0 TiB)"; "" for others.
func (c Change) Note() string {
	switch {
	case c.NotKept:
		return " (not kept, " + ShowSize(c.Size) + c.because() + ")"
	case c.InPlace:
		return " (" + writtenInPlace + ")"
	}
	return ""
}

// because is ": why" of a file not kept for another reason than its size.
func (c Change) because() string {
	if c.Why == "" {
		return ""
	}
	return ": " + c.Why
}

// NotRestored is a path undo left as it is, and why.
type NotRestored struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

// Summary is what changed between two checkpoints.
type Summary struct {
	// Counts of the root's files, .git's (and nested repositories' .git's) left out.
	Added    int `json:"added"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
	Mode     int `json:"mode"`
	Ignored  int `json:"ignored,omitempty"` // kept before, now ignored (see Ignored)
	// Git is how many files of .git changed (objects, refs, index …), a
	// nested repository's .git's too.
	Git int `json:"git"`
	// Changes lists every path: the root's first, then .git's, each sorted.
	Changes []Change `json:"changes,omitempty"`
	// NotRestored (an undo's): the paths it left as they are, files over
	// the size checkpoints keep; Changes leaves them out.
	NotRestored []NotRestored `json:"not_restored,omitempty"`
	// Later (an undo's): what changed after the command — later commands',
	// a job's, the user's own edits — that the undo took back too, as the
	// command after it would list it; the undo's own checkpoint keeps it.
	Later []Change `json:"later,omitempty"`
	// Raced (an undo's): the paths that did not end as the checkpoint has
	// them, something still running having changed them beside the undo,
	// as a command from the checkpoint to the root would list them.
	Raced []Change `json:"changed_during,omitempty"`
}

// laterShown: LaterText names this many paths.
const laterShown = 5

// LaterText names the changes after the command an undo took back too,
// briefly: "modified notes.md, added mine.txt, 3 more"; "" for none.
func (s Summary) LaterText() string { return Brief(s.Later) }

// RacedText says, briefly, what did not end as the checkpoint has it (Raced),
// and what to do; "" for nothing.
func (s Summary) RacedText() string {
	if len(s.Raced) == 0 {
		return ""
	}
	return "Changed during the undo by something still running (a job, a process a command left), so not as the checkpoint has it: " +
		Brief(s.Raced) + ". Stop it and undo again"
}

// Brief names changes briefly: the first few, then how many more.
func Brief(changes []Change) string {
	var parts []string
	for i, c := range changes {
		if i == laterShown {
			parts = append(parts, fmt.Sprintf("%d more", len(changes)-i))
			break
		}
		parts = append(parts, c.Text())
	}
	return strings.Join(parts, ", ")
}

// notKept counts the changes of files not kept: over max_file_size, and
// for another reason.
func (s Summary) notKept() (int, int) {
	n, other := 0, 0
	for _, c := range s.Changes {
		switch {
		case c.NotKept && c.Why != "":
			other++
		case c.NotKept:
			n++
		}
	}
	return n, other
}

// writtenInPlace says what a change of a linked file written in place is.
const writtenInPlace = "written in place: undo cannot put back what it held"

// inPlace counts the changes of linked files written in place.
func (s Summary) inPlace() int {
	n := 0
	for _, c := range s.Changes {
		if c.InPlace {
			n++
		}
	}
	return n
}

// Empty reports no change at all.
func (s Summary) Empty() bool { return len(s.Changes) == 0 }

// Text says it in a few words: "deleted 1204 files, modified 2; .git: 3 files".
func (s Summary) Text() string {
	var parts []string
	add := func(n int, what string) {
		switch {
		case n == 1:
			parts = append(parts, what+" 1 file")
		case n > 1:
			parts = append(parts, fmt.Sprintf("%s %d files", what, n))
		}
	}
	add(s.Deleted, "deleted")
	add(s.Modified, "modified")
	add(s.Added, "added")
	add(s.Mode, "changed the mode of")
	if s.Ignored > 0 {
		parts = append(parts, fmt.Sprintf("%d file%s now ignored (not deleted, no longer checkpointed)", s.Ignored, plural(s.Ignored)))
	}
	out := strings.Join(parts, ", ")
	if s.Git > 0 {
		if out != "" {
			out += "; "
		}
		out += fmt.Sprintf("changed %d file%s in .git", s.Git, plural(s.Git))
	}
	n, other := s.notKept()
	if n > 0 {
		out += fmt.Sprintf(" (%d not kept: over max_file_size)", n)
	}
	if other > 0 {
		out += fmt.Sprintf(" (%d not kept: ignored, and no hard link could be made in the store)", other)
	}
	if n := s.inPlace(); n > 0 {
		out += fmt.Sprintf(" (%d %s)", n, writtenInPlace)
	}
	if out == "" {
		return "changed nothing"
	}
	return out
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// rulesChanged reports whether entries change an ignore file: a .gitignore
// of the root's or .git/info/exclude.
func rulesChanged(entries []diffEntry) bool {
	for _, e := range entries {
		if e.path == "git/info/exclude" || strings.HasPrefix(e.path, "work/") && path.Base(e.path) == ".gitignore" {
			return true
		}
	}
	return false
}

// diffEntry is one line of git diff-tree --raw.
type diffEntry struct {
	oldMode, newMode string
	oldID, newID     string
	status           byte
	path             string // in the checkpoint's tree: work/…, git/…, modes
}

// diffTrees lists what differs between two checkpoint trees.
func (s *Store) diffTrees(a, b string) ([]diffEntry, error) {
	if a == b {
		return nil, nil
	}
	if x, y := s.recalled(a), s.recalled(b); x != nil && y != nil {
		return diffSnaps(x, y), nil
	}
	out, err := s.git(nil, "", "", "diff-tree", "-r", "-z", "--no-renames", "--raw", "--no-abbrev", a, b)
	if err != nil {
		return nil, err
	}
	var entries []diffEntry
	fields := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) < 5 {
			break
		}
		entries = append(entries, diffEntry{oldMode: meta[0], newMode: meta[1], oldID: meta[2], newID: meta[3], status: meta[4][0], path: fields[i+1]})
	}
	return entries, nil
}

// summarize turns the difference of two checkpoints into a Summary. The
// deletions of files b's own ignore rules leave out (keepLeftOut) are
// dropped for an undo to b, which leaves them; for a command that went from
// a to b they are files now ignored, not deleted — which only a change of an
// ignore file between a and b can make.
func (s *Store) summarize(a, b string, undo bool) (Summary, error) {
	entries, err := s.diffTrees(a, b)
	if err != nil {
		return Summary{}, err
	}
	var nowIgnored map[string]bool
	switch {
	case undo:
		if entries, _, err = s.keepLeftOut(entries, b, a); err != nil {
			return Summary{}, err
		}
	case rulesChanged(entries):
		left, _, err := s.keepLeftOut(entries, b, "")
		if err != nil {
			return Summary{}, err
		}
		nowIgnored = map[string]bool{}
		for _, e := range entries {
			if e.status == 'D' {
				nowIgnored[e.path] = true
			}
		}
		for _, e := range left {
			delete(nowIgnored, e.path)
		}
	}
	var sum Summary
	var work, git []Change
	seen := map[string]bool{}
	modesChanged := false
	for _, e := range entries {
		var kind string
		switch e.status {
		case 'A':
			kind = Added
		case 'D':
			kind = Deleted
			if nowIgnored[e.path] {
				kind = Ignored
			}
		case 'T':
			kind = Mode
		default:
			kind = Modified
			if e.oldID == e.newID {
				kind = Mode
			}
		}
		switch {
		case e.path == "modes":
			modesChanged = true
		case e.path == "gitfile":
			git = append(git, Change{Kind: kind, Path: ".git"})
		case strings.HasPrefix(e.path, "work/"):
			p := strings.TrimPrefix(e.path, "work/")
			seen["w"+p] = true
			work = append(work, Change{Kind: kind, Path: p})
		case strings.HasPrefix(e.path, "nested/"):
			p := workPath(e.path)
			seen["w"+p] = true
			git = append(git, Change{Kind: kind, Path: p})
		case strings.HasPrefix(e.path, "git/"):
			p := strings.TrimPrefix(e.path, "git/")
			seen["g"+p] = true
			git = append(git, Change{Kind: kind, Path: ".git/" + p})
		}
	}
	if modesChanged {
		ma, errA := s.readManifest(a)
		mb, errB := s.readManifest(b)
		if errA != nil || errB != nil {
			return Summary{}, fmt.Errorf("checkpoint: modes: %v %v", errA, errB)
		}
		markNotKept(work, ma.NotKeptWork, mb.NotKeptWork, "")
		markNotKept(git, ma.NotKeptWork, mb.NotKeptWork, "")
		markNotKept(git, ma.NotKeptGit, mb.NotKeptGit, ".git/")
		markInPlace(work, ma.Linked, mb.Linked)
		for _, side := range []struct {
			git    bool
			prefix string
			a, b   map[string]uint32
		}{{false, "", ma.Work, mb.Work}, {true, ".git/", ma.Git, mb.Git}} {
			key := "w"
			if side.git {
				key = "g"
			}
			for p := range union(side.a, side.b) {
				if seen[key+p] {
					continue
				}
				va, oka := side.a[p]
				vb, okb := side.b[p]
				if oka == okb && va == vb {
					continue
				}
				c := Change{Kind: Mode, Path: side.prefix + p}
				if side.git || strings.Contains("/"+p, "/.git/") {
					git = append(git, c)
				} else {
					work = append(work, c)
				}
			}
		}
	}
	sort.Slice(work, func(i, j int) bool { return work[i].Path < work[j].Path })
	sort.Slice(git, func(i, j int) bool { return git[i].Path < git[j].Path })
	for _, c := range work {
		switch c.Kind {
		case Added:
			sum.Added++
		case Deleted:
			sum.Deleted++
		case Modified:
			sum.Modified++
		case Mode:
			sum.Mode++
		case Ignored:
			sum.Ignored++
		}
	}
	sum.Git = len(git)
	sum.Changes = append(work, git...)
	return sum, nil
}

// markNotKept marks the changes of files a or b lists as not kept (keys:
// the path less prefix). A change of a file not kept changes the manifest
// too, so summarize reads both then.
func markNotKept(changes []Change, a, b map[string]notKeptFile, prefix string) {
	if len(a) == 0 && len(b) == 0 {
		return
	}
	for i := range changes {
		key, ok := strings.CutPrefix(changes[i].Path, prefix)
		if !ok || prefix == "" && strings.HasPrefix(key, ".git/") {
			continue
		}
		if n, ok := b[key]; ok {
			changes[i].NotKept, changes[i].Size, changes[i].Why = true, n.Size, n.Why
		} else if n, ok := a[key]; ok {
			changes[i].NotKept, changes[i].Size, changes[i].Why = true, n.Size, n.Why
		}
	}
}

// markInPlace marks the changes of linked files written in place between
// a and b: the same file (its link, named by its inode) with another size
// or time. A copy put in its place (the sandbox's copy-up, an editor's
// save) is another inode, and each side's link holds its own content.
func markInPlace(changes []Change, a, b map[string]linkedFile) {
	if len(a) == 0 || len(b) == 0 {
		return
	}
	for i, c := range changes {
		la, oka := a[c.Path]
		lb, okb := b[c.Path]
		if c.Kind == Modified && oka && okb && la.Link == lb.Link && la.Ino == lb.Ino && (la.Size != lb.Size || la.Mtime != lb.Mtime) {
			changes[i].InPlace, changes[i].Size = true, lb.Size
		}
	}
}

func union(a, b map[string]uint32) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// readManifest reads the modes of checkpoint tree.
func (s *Store) readManifest(tree string) (manifest, error) {
	var m manifest
	if r := s.recalled(tree); r != nil {
		return r.modes, nil
	}
	out, err := s.git(nil, "", "", "cat-file", "blob", tree+":modes")
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(out, &m); err != nil {
		return m, fmt.Errorf("checkpoint: modes of %s: %w", tree, err)
	}
	return m, nil
}

// ShowPath is a checkpoint's path as text for a person's terminal or a
// model: a name holding a control character, a character that is not shown
// (a bidirectional override, a zero-width one) or bytes that are not UTF-8 is
// quoted, as Go quotes a string. A command names its files, and a terminal
// obeys what a name like "x\x1b]52;c;…\a" says (here: write the clipboard)
// when `shellgate changes` or `shellgate run` prints it; "\u202egnp.exe"
// would read as "exe.png".
func ShowPath(p string) string {
	if !utf8.ValidString(p) {
		return strconv.Quote(p)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r >= 0x80 && !unicode.IsPrint(r) {
			return strconv.Quote(p)
		}
	}
	return p
}
