package checkpoint

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/shellgate/shellgate/internal/beneath"
	"github.com/shellgate/shellgate/internal/protect"
)

// locked runs f under the store's locks, with its records loaded.
func (s *Store) locked(f func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.load(); err != nil {
		return err
	}
	return f()
}

// Snapshot checkpoints the root before a command runs and records it; the
// command's id is returned. label says what ran (run, job, terminal …),
// session which session ran it.
func (s *Store) Snapshot(label, command, session string) (int, error) {
	var id int
	err := s.locked(func() error {
		var last Record // the files written since it began are named
		if n := len(s.records); n > 0 {
			last = s.records[n-1]
		}
		tree, err := s.snapshot()
		if err != nil {
			return s.noSpace(err, NoSpaceBefore, last)
		}
		id, err = s.record(Record{Label: label, Command: command, Session: session, Before: tree})
		if err != nil && id == 0 {
			return s.noSpace(err, NoSpaceBefore, last)
		}
		return err
	})
	return id, err
}

// Prime walks the root as a checkpoint would, recording nothing, so that the
// next checkpoint of this Store reads only what changed since (a process kept
// for that: package keeper).
func (s *Store) Prime() error {
	return s.locked(func() error {
		_, err := s.snapshot()
		return err
	})
}

// record appends r with the next id, and prunes past the bounds.
func (s *Store) record(r Record) (int, error) {
	r.ID = 1
	if n := len(s.records); n > 0 {
		r.ID = s.records[n-1].ID + 1
	}
	if last := s.lastID(); last >= r.ID {
		r.ID = last + 1
	}
	// r.Before is the checkpoint snapshot just took: s.modes is its manifest.
	r.Time, r.Format = s.o.Now().UTC(), recordFormat(s.modes)
	if err := s.setRef(strconv.Itoa(r.ID)+"-b", r.Before); err != nil {
		return 0, err
	}
	if r.After != "" {
		if err := s.setRef(strconv.Itoa(r.ID)+"-a", r.After); err != nil {
			return 0, err
		}
		r.End = r.Time
	}
	if err := s.appendLog(r); err != nil {
		return 0, err
	}
	s.records = append(s.records, r)
	s.saveLastID(r.ID)
	if err := s.prune(r.ID); err != nil {
		return r.ID, err
	}
	return r.ID, nil
}

// lastID is the highest id ever given (ids are not reused after a prune).
func (s *Store) lastID() int {
	b, _ := os.ReadFile(filepath.Join(s.dir, "last"))
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// saveLastID writes n over the last one in place, never emptying the file
// first: ext4 flushes a file truncated to nothing and written again at its
// close, a disk write in every command's path (0.6 ms here), and ids only
// grow, so the new one covers the old.
func (s *Store) saveLastID(n int) {
	f, err := os.OpenFile(filepath.Join(s.dir, "last"), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	b := []byte(strconv.Itoa(n) + "\n")
	if _, err := f.WriteAt(b, 0); err == nil {
		f.Truncate(int64(len(b))) // nothing left of a longer one
	}
}

// Finish checkpoints the root after command id ended, and returns what it
// changed.
func (s *Store) Finish(id int) (Summary, error) {
	var sum Summary
	err := s.locked(func() error {
		r, ok := s.find(id)
		if !ok {
			return fmt.Errorf("checkpoint: no command %d in the store", id)
		}
		tree, err := s.snapshot()
		if err != nil {
			return s.noSpace(err, NoSpaceAfter, r)
		}
		if err := s.setRef(strconv.Itoa(id)+"-a", tree); err != nil {
			return s.noSpace(err, NoSpaceAfter, r)
		}
		end := s.o.Now().UTC()
		if err := s.appendLog(Record{ID: id, After: tree, End: end}); err != nil {
			return err
		}
		for i := range s.records {
			if s.records[i].ID == id {
				s.records[i].After, s.records[i].End = tree, end
			}
		}
		sum, err = s.summarize(r.Before, tree, false)
		return err
	})
	return sum, err
}

func (s *Store) find(id int) (Record, bool) {
	for _, r := range s.records {
		if r.ID == id {
			return r, true
		}
	}
	return Record{}, false
}

// afterOf is the state command id left: its own after-checkpoint, else the
// next command's before-checkpoint, else the root now ("" then).
func (s *Store) afterOf(id int) string {
	for i, r := range s.records {
		if r.ID != id {
			continue
		}
		if r.After != "" {
			return r.After
		}
		if i+1 < len(s.records) {
			return s.records[i+1].Before
		}
	}
	return ""
}

// Changes returns what command id changed: from its checkpoint to the one
// taken when it ended (for a job, the next command's; for the last one still
// running, the root now).
func (s *Store) Changes(id int) (Summary, error) {
	var sum Summary
	err := s.locked(func() error {
		r, ok := s.find(id)
		if !ok {
			return fmt.Errorf("checkpoint: no command %d in the store (it may have been pruned)", id)
		}
		after := s.afterOf(id)
		if after == "" {
			var err error
			if after, err = s.snapshot(); err != nil {
				return err
			}
		}
		var err error
		sum, err = s.summarize(r.Before, after, false)
		return err
	})
	return sum, err
}

// Since returns what changed in the root after command id ended: the later
// commands' changes and the user's own, which Restore(id) would overwrite.
func (s *Store) Since(id int) (Summary, error) {
	var sum Summary
	err := s.locked(func() error {
		r, ok := s.find(id)
		if !ok {
			return fmt.Errorf("checkpoint: no command %d in the store (it may have been pruned)", id)
		}
		from := r.After
		if from == "" {
			from = r.Before // a job: whatever it did is "since" too
		}
		now, err := s.snapshot()
		if err != nil {
			return s.noSpace(err, NoSpaceUndo, r)
		}
		sum, err = s.summarize(from, now, false)
		return err
	})
	return sum, err
}

// crashHook, in tests, stops a restore at a step as a crash would.
var crashHook = func(step string) error { return nil }

// journal is a restore in progress.
type journal struct {
	Target string `json:"target,omitempty"`
	// Linked holds the target instead of Target where the target keeps a
	// file by a hard link (format 3): a build from before links, which reads
	// only "target", then refuses the journal (as damaged) rather than
	// finish the undo writing stubs over files.
	Linked string `json:"linked_target,omitempty"`
	Stage  string `json:"stage"`
	ID     int    `json:"id"` // the undo's own record
}

func (s *Store) journalPath() string { return filepath.Join(s.dir, "journal") }

// Restore puts the root back as it was before command id ran. The current
// state is checkpointed first, as a record of its own (label "undo"), whose id
// is returned: restoring that one's checkpoint undoes the undo. What the
// checkpoints leave out (ignored bulk) is left as it is. A crash part way is
// finished by the next Open.
func (s *Store) Restore(id int) (int, Summary, error) {
	var undo int
	var sum Summary
	err := s.locked(func() error {
		r, ok := s.find(id)
		if !ok {
			return fmt.Errorf("checkpoint: no command %d in the store (it may have been pruned)", id)
		}
		if r.Format > Format {
			return NewerFormatError{ID: id, Format: r.Format}
		}
		cur, err := s.snapshot()
		if err != nil {
			return s.noSpace(err, NoSpaceUndo, r)
		}
		if sum, err = s.summarize(cur, r.Before, true); err != nil {
			return err
		}
		// What changed after the command, taken back too: said, since
		// the user's own edits may be among it (Since, under the same lock
		// as the undo, so nothing between the look and the undo is missed).
		// (Not for a command whose end was not checkpointed, a job still
		// running or an after-checkpoint that failed: its own changes and
		// later ones cannot be told apart.)
		if from := r.After; from != "" && from != cur {
			later, err := s.summarize(from, cur, false)
			if err != nil {
				return err
			}
			// only what the undo changes: a later change that already
			// matches the checkpoint (a second undo of the same command)
			// is not taken back
			undone := map[string]bool{}
			for _, c := range sum.Changes {
				undone[c.Path] = true
			}
			for _, c := range later.Changes {
				if undone[c.Path] {
					sum.Later = append(sum.Later, c)
				}
			}
		}
		undo, err = s.record(Record{Label: "undo", Command: fmt.Sprintf("shellgate undo %d", id), Before: cur, After: r.Before})
		if err != nil {
			return err
		}
		then, err := s.readManifest(r.Before)
		if err != nil {
			return err
		}
		j := journal{Stage: fmt.Sprintf("%s%d", stagePrefix, undo), ID: undo}
		if recordFormat(then) > stubFormat {
			j.Linked = r.Before
		} else {
			j.Target = r.Before
		}
		b, _ := json.Marshal(j)
		if err := writeAtomic(s.journalPath(), b); err != nil {
			return err
		}
		j.Target = r.Before
		if err := crashHook("journal"); err != nil {
			return err
		}
		left, err := s.apply(cur, j)
		if err != nil {
			return fmt.Errorf("checkpoint: restore stopped part way (the next shellgate run finishes it): %w", err)
		}
		sum.leaveOut(left)
		if err := os.Remove(s.journalPath()); err != nil {
			return err
		}
		// Something still running (a job, a process a command left) may
		// have written beside the undo: what does not end as the checkpoint
		// has it is said, not claimed restored.
		return s.lookAgain(r.Before, &sum)
	})
	return undo, sum, err
}

// lookAgain sets sum.Raced to what differs, after an undo to target, between
// the root and target, but for what the undo left as it is.
func (s *Store) lookAgain(target string, sum *Summary) error {
	now, err := s.snapshot()
	if err != nil || now == target {
		return err
	}
	d, err := s.summarize(target, now, false)
	if err != nil || d.Empty() {
		return err
	}
	// Left as they are by design: what the undo did not restore; a big
	// ignored file target keeps by a link (a stub of its stat, which a copy
	// put back where the mode changed has not); a nested repository target
	// kept as a gitlink (an older build's checkpoint).
	left := map[string]bool{}
	for _, l := range sum.NotRestored {
		left[l.Path] = true
	}
	m, err := s.readManifest(target)
	if err != nil {
		return err
	}
	for p := range m.Linked {
		left[p] = true
	}
	var gitlinks []string
	if entries, err := s.diffTrees(target, now); err == nil {
		for _, e := range entries {
			if p, ok := strings.CutPrefix(e.path, "work/"); ok && e.oldMode == "160000" {
				gitlinks = append(gitlinks, p+"/")
				left[p] = true
			}
		}
	}
	for _, c := range d.Changes {
		if !left[c.Path] && !slices.ContainsFunc(gitlinks, func(g string) bool { return strings.HasPrefix(c.Path, g) }) {
			sum.Raced = append(sum.Raced, c)
		}
	}
	return nil
}

// recover finishes a restore a crash interrupted: the root ends as the
// restore meant it.
func (s *Store) recover() error {
	b, err := os.ReadFile(s.journalPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	var j journal
	err = json.Unmarshal(b, &j)
	if j.Target == "" {
		j.Target = j.Linked
	}
	if err != nil || j.Target == "" || !strings.HasPrefix(j.Stage, stagePrefix) || strings.ContainsAny(j.Stage, `/\`) {
		return fmt.Errorf("checkpoint: the journal %s of an interrupted undo is damaged; remove it and check the root", s.journalPath())
	}
	cur, err := s.snapshot()
	if err != nil {
		return err
	}
	if _, err := s.apply(cur, j); err != nil {
		return fmt.Errorf("checkpoint: finishing an interrupted undo: %w", err)
	}
	return os.Remove(s.journalPath())
}

// apply changes the root from checkpoint cur to checkpoint j.Target: files
// are staged in j.Stage inside the root, then renamed into place. It
// returns the paths it left as they are: files over the size checkpoints
// keep (notKeptSkips).
//
// Every step works through directories held open from the root, resolving
// no symlink beneath it (package beneath): a command still running (a job)
// that turns a directory into a symlink out of the root between a look and a
// write makes the step fail or act on the directory it first opened, never
// on what the symlink points to. A symlink where the checkpoint has a
// directory is a change like any other: it is removed, not followed, and
// the directory made.
func (s *Store) apply(cur string, j journal) ([]NotRestored, error) {
	entries, err := s.diffTrees(cur, j.Target)
	if err != nil {
		return nil, err
	}
	entries, kept := keepGitlinks(entries)
	if entries, _, err = s.keepLeftOut(entries, j.Target, cur); err != nil {
		return nil, err
	}
	target, err := s.readManifest(j.Target)
	if err != nil {
		return nil, err
	}
	now, err := s.readManifest(cur)
	if err != nil {
		return nil, err
	}
	entries, left := notKeptSkips(entries, now, target)
	entries, unlinked := s.linkedSkips(entries, target)
	left = append(left, unlinked...)
	root, err := beneath.OpenRoot(s.root)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	// A directory a command made 000 (`chmod 000 src`) would stop the undo
	// part way, and every next shellgate finishing it: the checkpoint read
	// it, undo writes in it again (a directory's mode is not kept).
	root.EnterOwnDirs()
	stage, dropStage, err := s.makeStage(root, j.Stage)
	if err != nil {
		return nil, err
	}
	defer dropStage()
	if err := crashHook("stage"); err != nil {
		return nil, err
	}
	writes, err := s.stageWrites(entries, stage, target)
	if err != nil {
		return nil, err
	}
	// Deletions first: a file may make way for a directory of the same name.
	gitfile, err := s.applyDeletes(root, entries)
	if err != nil {
		return nil, err
	}
	if err := crashHook("deleted"); err != nil {
		return nil, err
	}
	if err := s.applyWrites(root, writes, stage); err != nil {
		return nil, err
	}
	if gitfile != nil && gitfile.status != 'D' && len(now.NotKeptGit) > 0 {
		// The .git file would replace a .git directory holding files not
		// kept: it is left as it is.
		left = append(left, NotRestored{".git", "a directory holding files over max_file_size, which checkpoints do not keep: left as it is, not replaced by the .git file the checkpoint had"})
	} else if gitfile != nil && gitfile.status != 'D' {
		if err := s.restoreGitfile(root, gitfile.newID, stage); err != nil {
			return nil, err
		}
	}
	// git wants these directories, which it made empty at init and no file
	// of a checkpoint brings back once removed.
	makeGitDirs(root, ".git")
	written := map[string]bool{}
	for _, w := range writes {
		written[w.path] = true
	}
	// The same in each nested repository the undo touched.
	repos := map[string]bool{}
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.path, "nested/"); ok {
			enc, _, _ := strings.Cut(rest, "/")
			repos[nestedPath(enc)] = true
		}
	}
	for r := range repos {
		if filepath.IsLocal(filepath.FromSlash(r)) {
			makeGitDirs(root, path.Join(r, ".git"))
		}
	}
	s.restoreModes(root, now, target, written, kept)
	left = append(left, relinkNames(root, stage, target, left)...)
	return left, nil
}

// relinkNames makes the names each file of target had (hard links of one
// another: target.HardLinks) one file again: a name restored from the
// store, or replaced since, is a file of its own. Each name is made a link
// of the group's first (the first one there as a regular file), where it is
// a regular file of the same content and mode, so nothing is lost: not a
// name the undo left (left), nor one a sandbox keeps by its file (a
// protected path, written in place). One that cannot be linked keeps its
// content, and is listed as left a file of its own.
func relinkNames(root, stage *beneath.Root, target manifest, left []NotRestored) []NotRestored {
	skip := map[string]bool{}
	for _, l := range left {
		skip[l.Path] = true
	}
	var out []NotRestored
	for _, names := range target.HardLinks {
		var first *os.File
		var firstDir *beneath.Root
		var firstName, firstPath string
		for _, p := range names {
			rel := filepath.FromSlash(p)
			if skip[p] || protect.Guarded(rel) || !filepath.IsLocal(rel) {
				continue
			}
			dirRel, name := splitRel(rel)
			dir, err := root.OpenDir(dirRel)
			if err != nil {
				continue
			}
			f, err := dir.OpenFile(name)
			if err != nil {
				dir.Close()
				continue
			}
			if first == nil {
				first, firstDir, firstName, firstPath = f, dir, name, p
				continue
			}
			if err := relinkOne(first, firstDir, firstName, f, dir, name, stage); err != nil {
				out = append(out, NotRestored{Path: p, Why: fmt.Sprintf("restored, but as a file of its own: it was one file with %s (a hard link), and the link could not be made again (%v)", ShowPath(firstPath), err)})
			}
			f.Close()
			dir.Close()
		}
		if first != nil {
			first.Close()
			firstDir.Close()
		}
	}
	return out
}

// relinkOne makes name of dir (open as f) a link of firstName of firstDir
// (open as first), through stage, where the two are regular files of the
// same mode and content and not one file already; nil where nothing was to
// be done.
func relinkOne(first *os.File, firstDir *beneath.Root, firstName string, f *os.File, dir *beneath.Root, name string, stage *beneath.Root) error {
	a, errA := first.Stat()
	b, errB := f.Stat()
	if errA != nil || errB != nil || !a.Mode().IsRegular() || !b.Mode().IsRegular() || os.SameFile(a, b) ||
		a.Size() != b.Size() || a.Mode().Perm() != b.Mode().Perm() || !sameContent(first, f) {
		return nil
	}
	const tmp = "relink"
	err := fresh(stage, tmp, func() error { return firstDir.Link(first, firstName, stage, tmp) })
	if err == nil {
		err = renameOver(stage, tmp, dir, name)
	}
	if err != nil {
		stage.Remove(tmp)
	}
	return err
}

// sameContent reports whether the files a and b, open for reading, hold the
// same bytes (read from their start).
func sameContent(a, b *os.File) bool {
	bufA, bufB := make([]byte, 64<<10), make([]byte, 64<<10)
	for off := int64(0); ; {
		n, errA := a.ReadAt(bufA, off)
		m, errB := b.ReadAt(bufB[:n], off)
		if m != n || !bytes.Equal(bufA[:n], bufB[:n]) {
			return false
		}
		off += int64(n)
		if errA == io.EOF {
			// b must end here too
			k, _ := b.ReadAt(bufB[:1], off)
			return k == 0
		}
		if errA != nil || errB != nil && errB != io.EOF {
			return false
		}
	}
}

// makeStage makes the directory a restore writes its files in before they
// are renamed into place, and returns it with what removes it. It is a
// directory of our own, made fresh: whatever is at its (predictable) name —
// a symlink to a directory outside the root — is removed first, never
// followed, and the files are written through the directory made, by names
// in it.
//
// It is made beside the root (in its parent, named after the root too) where
// a file renamed from there lands in the root: a command of a sandboxed
// session still running — a job — sees nothing outside the root, so it can
// neither swap a staged file nor open one and write through that descriptor
// once it is .git/config. Else (the parent not writable, the root a mount
// point of its own, Windows) it is made in the root, as name.
func (s *Store) makeStage(root *beneath.Root, name string) (*beneath.Root, func(), error) {
	if parent := filepath.Dir(s.root); parent != s.root && stageBeside {
		if top, err := beneath.OpenRoot(parent); err == nil {
			outside := name + "-" + stageTag(s.root)
			if stage, err := freshDir(top, outside); err == nil {
				if landsInRoot(stage, root) {
					return stage, func() { stage.Close(); top.RemoveAll(outside); top.Close() }, nil
				}
				stage.Close()
				top.RemoveAll(outside)
			}
			top.Close()
		}
	}
	stage, err := freshDir(root, name)
	if err != nil {
		return nil, nil, err
	}
	return stage, func() { stage.Close(); root.RemoveAll(name) }, nil
}

// freshDir makes the directory name of r anew (removing whatever is there)
// and opens it.
func freshDir(r *beneath.Root, name string) (*beneath.Root, error) {
	if err := r.RemoveAll(name); err != nil {
		return nil, err
	}
	if err := r.Mkdir(name, 0o700); err != nil {
		return nil, err
	}
	d, err := r.OpenDir(name)
	if err != nil {
		r.RemoveAll(name)
	}
	return d, err
}

// landsInRoot reports whether a file of stage can be renamed into root: one
// file system and one mount. The probe passes through the root empty and
// unlinked at once.
func landsInRoot(stage, root *beneath.Root) bool {
	f, err := stage.Create("probe", 0o600)
	if err != nil {
		return false
	}
	f.Close()
	probe := stagePrefix + "probe-" + beneath.RandomName()
	if err := stage.Rename("probe", root, probe); err != nil {
		return false
	}
	root.Remove(probe)
	return true
}

// stageBeside: tests set it false to take the stage in the root.
var stageBeside = true

// stageTag tells apart the stages of roots that share a parent.
func stageTag(root string) string {
	h := sha256.Sum256([]byte(root))
	return hex.EncodeToString(h[:4])
}

// makeGitDirs makes, in the git directory dot (of the root, when its HEAD is
// a file), the directories git made empty at init; an entry on the way that
// is not a directory is left as it is.
func makeGitDirs(root *beneath.Root, dot string) {
	d, err := root.OpenDir(dot)
	if err != nil {
		return
	}
	defer d.Close()
	if st, err := d.Lstat("HEAD"); err != nil || !st.Mode.IsRegular() {
		return
	}
	for _, rel := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		cur, err := d.OpenDir(".")
		for _, part := range strings.Split(rel, "/") {
			if err != nil {
				break
			}
			cur.Mkdir(part, 0o755) // there already: opened below
			var next *beneath.Root
			next, err = cur.OpenDir(part)
			cur.Close()
			cur = next
		}
		if err == nil {
			cur.Close()
		}
	}
}

// keepGitlinks drops from entries what would empty a directory that
// target, a checkpoint of the old format, kept as a gitlink (a nested
// repository's commit): such a directory is left as it is, its working
// files and .git. It returns the gitlinks' paths (of the work tree).
func keepGitlinks(entries []diffEntry) ([]diffEntry, []string) {
	var links []string
	for _, e := range entries {
		if e.newMode == "160000" && strings.HasPrefix(e.path, "work/") {
			links = append(links, strings.TrimPrefix(e.path, "work/"))
		}
	}
	if len(links) == 0 {
		return entries, nil
	}
	out := entries[:0:0]
	for _, e := range entries {
		if e.status == 'D' && underAny(workPath(e.path), links) {
			continue
		}
		out = append(out, e)
	}
	return out, links
}

// keepLeftOut drops from entries the deletion of each root file that
// checkpoint target, by its own ignore rules (its .gitignore files and
// .git/info/exclude), would have left out for being ignored bulk: such a file
// is missing from target because target did not keep it, not because it was
// not there. A command that rewrote .gitignore (`echo dist/ > .gitignore`)
// makes the user's ignored files — a database, a dataset, node_modules —
// part of every checkpoint after it; undo to before it must leave them, as
// it leaves all ignored bulk, not delete them for being new.
//
// For an undo from checkpoint cur ("" otherwise), a big ignored file cur
// keeps by a link, of a size target linked too, was not there then: it goes,
// as a small ignored file made since does, and undoing the undo brings it
// back from cur's link.
func (s *Store) keepLeftOut(entries []diffEntry, target, cur string) ([]diffEntry, []string, error) {
	var paths []string
	dirs := map[string]bool{}
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.path, "work/"); ok && e.status == 'D' {
			paths = append(paths, rest)
			for d := path.Dir(rest); d != "."; d = path.Dir(d) {
				dirs[d] = true
			}
		}
	}
	if len(paths) == 0 {
		return entries, nil, nil
	}
	// The ignore files target holds, read in one git process.
	names := []string{"git/info/exclude", "work/.gitignore"}
	for d := range dirs {
		if !strings.ContainsAny(d, "\n\r") { // one name a line
			names = append(names, "work/"+d+"/.gitignore")
		}
	}
	var in strings.Builder
	for _, n := range names {
		in.WriteString(target + ":" + n + "\n")
	}
	out, err := s.git([]byte(in.String()), "", "", "cat-file", "--batch")
	if err != nil {
		return nil, nil, err
	}
	files := map[string][]byte{}
	for _, n := range names {
		header, rest, ok := strings.Cut(string(out), "\n")
		if !ok {
			return nil, nil, fmt.Errorf("checkpoint: reading the ignore files of %s: short answer", target)
		}
		if !strings.HasSuffix(header, " missing") && !strings.HasSuffix(header, " ambiguous") {
			// ID TYPE SIZE, then the content: a blob's are rules; a tree
			// where a .gitignore would be has none.
			f := strings.Fields(header)
			size := -1
			if len(f) == 3 {
				size, _ = strconv.Atoi(f[2])
			}
			if size < 0 || size+1 > len(rest) {
				return nil, nil, fmt.Errorf("checkpoint: reading the ignore files of %s: bad answer %q", target, header)
			}
			if f[1] == "blob" {
				files[n] = []byte(rest[:size])
			}
			rest = rest[size+1:]
		}
		out = []byte(rest)
	}
	var now, then manifest
	if cur != "" {
		if now, err = s.readManifest(cur); err != nil {
			return nil, nil, err
		}
		if then, err = s.readManifest(target); err != nil {
			return nil, nil, err
		}
	}
	global := parseIgnore("", append(files["git/info/exclude"], ownDirs...))
	stacks := map[string]*ignoreStack{".": (&ignoreStack{global: global}).push(parseIgnore("", files["work/.gitignore"]))}
	var stackOf func(dir string) *ignoreStack
	stackOf = func(dir string) *ignoreStack {
		if st, ok := stacks[dir]; ok {
			return st
		}
		st := stackOf(path.Dir(dir))
		if b, ok := files["work/"+dir+"/.gitignore"]; ok {
			st = st.push(parseIgnore(dir, b))
		}
		stacks[dir] = st
		return st
	}
	leftOut := func(p string) bool {
		// Ignored itself, or beneath an ignored directory, whose files git
		// never looks at.
		var parts []string
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			parts = append(parts, d)
		}
		for i := len(parts) - 1; i >= 0; i-- {
			if stackOf(path.Dir(parts[i])).excluded(parts[i], true) {
				return true
			}
		}
		if !stackOf(path.Dir(p)).excluded(p, false) {
			return false
		}
		fi, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(p)))
		if err != nil || s.keptIgnored(p, fi.Size()) {
			return false
		}
		st, _ := statOf(fi)
		l, linked := now.Linked[p]
		if l.Via { // kept by the link of a copy of the same bytes
			return !linked || fi.Size() != l.Size || fi.Size() > then.LinkMax
		}
		return !linked || l.Ino != st.ino || fi.Size() > then.LinkMax
	}
	out2 := entries[:0:0]
	var left []string
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.path, "work/"); ok && e.status == 'D' && leftOut(rest) {
			left = append(left, rest)
			continue
		}
		out2 = append(out2, e)
	}
	return out2, left, nil
}

// workPath is the root's path (slash-separated) of checkpoint path p of the
// work tree or of a nested repository's .git; "" for others.
func workPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "work/"); ok {
		return rest
	}
	if rest, ok := strings.CutPrefix(p, "nested/"); ok {
		enc, sub, _ := strings.Cut(rest, "/")
		r := nestedPath(enc) + "/.git"
		if sub != "" {
			r += "/" + sub
		}
		return r
	}
	return ""
}

// underAny reports p below one of dirs.
func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if p != "" && strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// staged is a file of the checkpoint restored: its checkpoint path, and its
// name in the stage.
type staged struct {
	diffEntry
	name string
}

// maxLink bounds a symlink's target read from the store.
const maxLink = 64 << 10

// stageWrites writes the files of checkpoint j.Target that entries add or
// change into stage, each under a name of its own there (its number), with
// the mode target gives it, and returns them. The blobs are read from the
// store by git cat-file; nothing but this process writes in the root.
func (s *Store) stageWrites(entries []diffEntry, stage *beneath.Root, target manifest) ([]staged, error) {
	var writes []staged
	for _, e := range entries {
		if e.path == "modes" || e.path == "gitfile" || e.status == 'D' || e.newMode == "160000" {
			continue
		}
		if _, _, ok := s.dest(e.path); !ok {
			continue
		}
		writes = append(writes, staged{e, strconv.Itoa(len(writes))})
	}
	if len(writes) == 0 {
		return nil, nil
	}
	b, err := s.openBlobs()
	if err != nil {
		return nil, err
	}
	defer b.close()
	for _, w := range writes {
		if err := s.stageOne(b, w, stage, target); err != nil {
			return nil, err
		}
	}
	return writes, nil
}

// stageOne writes w into stage.
func (s *Store) stageOne(b *blobReader, w staged, stage *beneath.Root, target manifest) error {
	if w.newMode == "120000" {
		var link bytes.Buffer
		if err := b.copy(w.newID, &link, maxLink); err != nil {
			return err
		}
		return fresh(stage, w.name, func() error { return stage.Symlink(link.String(), w.name) })
	}
	_, rel, _ := s.dest(w.path)
	perm := fs.FileMode(target.perm(strings.HasPrefix(w.path, "git/"), rel, w.newMode == "100755"))
	l, linked := target.linked(w.path)
	if linked && s.stageLink(l, stage, w.name, perm) == nil {
		return nil
	}
	var f *os.File
	err := fresh(stage, w.name, func() (err error) {
		f, err = stage.Create(w.name, 0o600)
		return err
	})
	if err != nil {
		return err
	}
	if linked {
		err = s.copyLinked(l, f) // where no link could be made (EXDEV, EPERM)
	} else {
		err = b.copy(w.newID, f, -1)
	}
	if err == nil {
		err = f.Chmod(perm) // on the descriptor: the umask aside
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// fresh runs make, which makes name in stage, and, while something is in
// its way there (the stage is in the root: a command may make names in it
// as soon as it is made), removes that, never following it, and tries again.
func fresh(stage *beneath.Root, name string, make func() error) error {
	for try := 0; ; try++ {
		err := make()
		if err == nil || !errors.Is(err, fs.ErrExist) || try == 16 {
			return err
		}
		if err := stage.RemoveAll(name); err != nil {
			return err
		}
	}
}

// blobReader reads blobs from the store through one git cat-file --batch.
type blobReader struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer
}

func (s *Store) openBlobs() (*blobReader, error) {
	b := &blobReader{cmd: s.gitCmd("", "", "cat-file", "--batch")}
	b.cmd.Stderr = &b.stderr
	in, err := b.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := b.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := b.cmd.Start(); err != nil {
		return nil, fmt.Errorf("checkpoint: git cat-file: %w", err)
	}
	b.in, b.out = in, bufio.NewReaderSize(out, 64<<10)
	return b, nil
}

// copy writes blob id to w; at most max bytes of it (-1: no bound).
func (b *blobReader) copy(id string, w io.Writer, max int64) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("checkpoint: git cat-file %s: %s %s", id, fmt.Sprintf(format, args...), strings.TrimSpace(b.stderr.String()))
	}
	if _, err := io.WriteString(b.in, id+"\n"); err != nil {
		return fail("%v", err)
	}
	line, err := b.out.ReadString('\n')
	if err != nil {
		return fail("%v", err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != id || f[1] != "blob" {
		return fail("%q", strings.TrimSpace(line))
	}
	n, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || n < 0 || max >= 0 && n > max {
		return fail("size %q", f[2])
	}
	if _, err := io.CopyN(w, b.out, n); err != nil {
		return fail("%v", err)
	}
	if c, err := b.out.ReadByte(); err != nil || c != '\n' {
		return fail("no end of object")
	}
	return nil
}

func (b *blobReader) close() {
	b.in.Close()
	io.Copy(io.Discard, b.out)
	b.cmd.Wait()
}

// splitRel is rel's directory ("." for the root's) and name.
func splitRel(rel string) (string, string) {
	return filepath.Dir(rel), filepath.Base(rel)
}

// applyDeletes removes from the root what entries delete, and returns the
// entry of the .git file, if any.
func (s *Store) applyDeletes(root *beneath.Root, entries []diffEntry) (gitfile *diffEntry, err error) {
	for i, e := range entries {
		if e.path == "gitfile" {
			gitfile = &entries[i]
			if e.status == 'D' {
				if st, err := root.Lstat(".git"); err == nil && st.Mode.IsRegular() {
					if err := root.Remove(".git"); err != nil {
						return nil, err
					}
				}
			}
			continue
		}
		if e.status != 'D' || e.path == "modes" {
			continue
		}
		if err := s.deleteEntry(root, e.path); err != nil {
			return nil, err
		}
	}
	return gitfile, nil
}

// deleteEntry removes the root's file of checkpoint path p, and the
// directories of the work tree it leaves empty. A directory on the way that
// is not one (a symlink now) holds no file of the root to remove.
func (s *Store) deleteEntry(root *beneath.Root, p string) error {
	rel, _, ok := s.dest(p)
	if !ok {
		return nil
	}
	dirRel, name := splitRel(rel)
	dir, err := root.OpenDir(dirRel)
	if err != nil {
		return nil
	}
	defer dir.Close()
	if err := dir.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		if st, lerr := dir.Lstat(name); lerr == nil && st.Mode.IsDir() {
			return nil // a gitlink's directory: left as it is
		}
		return err
	}
	if strings.HasPrefix(p, "work/") || strings.HasPrefix(p, "nested/") {
		removeEmptyParents(root, dirRel)
	}
	return nil
}

// dirs holds the directory of the root a pass last opened (or made), by
// its path: the paths come sorted, so files of one directory follow each
// other, and one descriptor is held however many directories there are.
type dirs struct {
	root *beneath.Root
	make bool // MakeDir: what is in the way is replaced
	rel  string
	dir  *beneath.Root
}

func (d *dirs) get(rel string) (*beneath.Root, error) {
	if d.dir != nil && d.rel == rel {
		return d.dir, nil
	}
	d.close()
	var r *beneath.Root
	var err error
	if d.make {
		r, err = d.root.MakeDir(rel, 0o755)
	} else {
		r, err = d.root.OpenDir(rel)
	}
	if err != nil {
		return nil, err
	}
	d.rel, d.dir = rel, r
	return r, nil
}

func (d *dirs) close() {
	if d.dir != nil {
		d.dir.Close()
		d.dir = nil
	}
}

// applyWrites renames the staged files into place. The directories leading
// to each are made, what stands in their way removed (a file; a symlink,
// never followed), and a directory where the file goes removed whole.
func (s *Store) applyWrites(root *beneath.Root, writes []staged, stage *beneath.Root) error {
	parents := dirs{root: root, make: true}
	defer parents.close()
	for i, w := range writes {
		if i == len(writes)/2 {
			if err := crashHook("half"); err != nil {
				return err
			}
		}
		rel, _, _ := s.dest(w.path)
		dirRel, name := splitRel(rel)
		dir, err := parents.get(dirRel)
		if err != nil {
			return err
		}
		// A protected path (.git/config, a hook) is written into the file
		// there: a sandboxed session still running keeps that very file
		// read-only by a bind mount, and a new one renamed over it would be
		// writable until the sandbox looked again — long enough for a job
		// watching for it to open it and, later, write core.fsmonitor through
		// that descriptor for git on the host to run.
		if protect.Guarded(rel) {
			done, err := rewriteInPlace(stage, w.name, dir, name)
			if err != nil {
				return err
			}
			if done {
				continue
			}
		}
		if err := renameOver(stage, w.name, dir, name); err != nil {
			return err
		}
	}
	return nil
}

// rewriteInPlace writes the staged file from of stage into the file name of dir,
// which stays the same file, with the staged file's mode; false (nothing
// done) where name is not a regular file of one name. A crash part way
// leaves it half written, as the journal's next run finishes it.
func rewriteInPlace(stage *beneath.Root, from string, dir *beneath.Root, name string) (bool, error) {
	if st, err := dir.Lstat(name); err != nil || !st.Mode.IsRegular() || st.Links != 1 {
		return false, nil
	}
	src, err := stage.OpenFile(from)
	if err != nil {
		return false, err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return false, err
	}
	dst, err := dir.OpenWrite(name)
	if err != nil {
		return false, nil // (a file made read-only on the host): renamed over instead
	}
	n, err := io.Copy(dst, src)
	if err == nil {
		err = dst.Truncate(n)
	}
	if err == nil {
		err = dst.Chmod(fi.Mode().Perm())
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	return err == nil, err
}

// renameOver renames from (in stage) to name of dir, replacing a directory
// there (removed whole, beneath dir).
func renameOver(stage *beneath.Root, from string, dir *beneath.Root, name string) error {
	var err error
	for try := 0; try < 8; try++ {
		if st, lerr := dir.Lstat(name); lerr == nil && st.Mode.IsDir() {
			if err := dir.RemoveAll(name); err != nil {
				return err
			}
		}
		if err = stage.Rename(from, dir, name); err == nil {
			return nil
		}
		if st, lerr := dir.Lstat(name); lerr != nil || !st.Mode.IsDir() {
			return err
		}
	}
	return err
}

// restoreGitfile puts back the root's .git file, blob id, through stage.
func (s *Store) restoreGitfile(root *beneath.Root, id string, stage *beneath.Root) error {
	b, err := s.git(nil, "", "", "cat-file", "blob", id)
	if err != nil {
		return err
	}
	if st, err := root.Lstat(".git"); err == nil && !st.Mode.IsRegular() {
		if err := root.RemoveAll(".git"); err != nil {
			return err
		}
	}
	const tmp = "gitfile"
	var f *os.File
	err = fresh(stage, tmp, func() (err error) {
		f, err = stage.Create(tmp, 0o644)
		return err
	})
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return stage.Rename(tmp, root, ".git")
}

// restoreModes sets the modes that changed on files whose content did not
// (those not written): target's exact modes, and git's defaults where cur
// had an exact mode that target has not.
func (s *Store) restoreModes(root *beneath.Root, cm, target manifest, written map[string]bool, kept []string) {
	// A file not kept, then or now, is left as it is, its mode too.
	notKept := func(p string) bool {
		_, a := cm.notKept(p)
		_, b := target.notKept(p)
		return a || b
	}
	open := dirs{root: root}
	defer open.close()
	fix := func(p string, perm func(beneath.Stat) uint32) {
		rel, _, ok := s.dest(p)
		if !ok {
			return
		}
		dirRel, name := splitRel(rel)
		dir, err := open.get(dirRel)
		if err != nil {
			return
		}
		if st, err := dir.Lstat(name); err == nil && st.Mode.IsRegular() {
			if want := fs.FileMode(perm(st)); st.Mode.Perm() != want {
				chmodOwn(dir, name, st, want)
			}
		}
	}
	for _, side := range []struct {
		prefix string
		tab    map[string]uint32
	}{{"work/", target.Work}, {"git/", target.Git}} {
		for _, p := range slices.Sorted(maps.Keys(side.tab)) { // a directory's files together
			perm := side.tab[p]
			if written[side.prefix+p] || notKept(side.prefix+p) {
				continue
			}
			fix(side.prefix+p, func(beneath.Stat) uint32 { return perm })
		}
	}
	for _, side := range []struct {
		git        bool
		prefix     string
		cur, wants map[string]uint32
	}{{false, "work/", cm.Work, target.Work}, {true, "git/", cm.Git, target.Git}} {
		for _, p := range slices.Sorted(maps.Keys(side.cur)) {
			if _, ok := side.wants[p]; ok || written[side.prefix+p] || !side.git && underAny(p, kept) || notKept(side.prefix+p) {
				continue
			}
			fix(side.prefix+p, func(st beneath.Stat) uint32 { return defaultPerm(side.git, p, st.Mode.Perm()&0o100 != 0) })
		}
	}
}

// chmodOwn sets the permission bits of name in dir, the regular file st. A
// file with more names than this one (a command may hard-link a package
// store's file outside the root in its place: the content is the
// checkpoint's, only the mode differs) gets a copy of its own first, with
// its bytes and times, so its other names keep their mode.
func chmodOwn(dir *beneath.Root, name string, st beneath.Stat, perm fs.FileMode) error {
	if st.Links <= 1 {
		return dir.Chmod(name, perm)
	}
	src, err := dir.OpenFile(name)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp := stagePrefix + "copy-" + beneath.RandomName()
	dst, err := dir.Create(tmp, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if err == nil {
		err = dst.Chmod(perm)
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dir.Chtimes(tmp, st.ModTime, st.ModTime)
	}
	if err == nil {
		err = dir.Rename(tmp, dir, name)
	}
	if err != nil {
		dir.Remove(tmp)
	}
	return err
}

// dest maps a checkpoint path (work/…, git/…, nested/…) to the root's file,
// relative to the root (a local path), and the path relative to its pass.
func (s *Store) dest(p string) (string, string, bool) {
	var rel, pass string
	switch {
	case strings.HasPrefix(p, "work/"):
		pass = strings.TrimPrefix(p, "work/")
		rel = pass
	case strings.HasPrefix(p, "git/"):
		pass = strings.TrimPrefix(p, "git/")
		rel = ".git/" + pass
	case strings.HasPrefix(p, "nested/"):
		// a nested repository's .git: its manifest entries are the work
		// tree's, by the path in the root
		rel = workPath(p)
		pass = rel
	default:
		return "", "", false
	}
	if rel == "" || path.Clean(rel) != rel || !filepath.IsLocal(filepath.FromSlash(rel)) {
		return "", "", false
	}
	return filepath.FromSlash(rel), pass, true
}

// removeEmptyParents removes dirRel, a directory of the root a deleted file
// was in, and those above it, while they are empty.
func removeEmptyParents(root *beneath.Root, dirRel string) {
	for d := dirRel; d != "." && d != ""; d = filepath.Dir(d) {
		parent, err := root.OpenDir(filepath.Dir(d))
		if err != nil {
			return
		}
		err = parent.RemoveDir(filepath.Base(d))
		parent.Close()
		if err != nil {
			return
		}
	}
}
