package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
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
		tree, err := s.snapshot()
		if err != nil {
			return err
		}
		id, err = s.record(Record{Label: label, Command: command, Session: session, Before: tree})
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
	r.Time = s.o.Now().UTC()
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
			return err
		}
		if err := s.setRef(strconv.Itoa(id)+"-a", tree); err != nil {
			return err
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
		sum, err = s.summarize(r.Before, tree)
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
		sum, err = s.summarize(r.Before, after)
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
			return err
		}
		sum, err = s.summarize(from, now)
		return err
	})
	return sum, err
}

// crashHook, in tests, stops a restore at a step as a crash would.
var crashHook = func(step string) error { return nil }

// journal is a restore in progress.
type journal struct {
	Target string `json:"target"`
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
		cur, err := s.snapshot()
		if err != nil {
			return err
		}
		if sum, err = s.summarize(cur, r.Before, s.keepLeftOut); err != nil {
			return err
		}
		undo, err = s.record(Record{Label: "undo", Command: fmt.Sprintf("shellgate undo %d", id), Before: cur, After: r.Before})
		if err != nil {
			return err
		}
		j := journal{Target: r.Before, Stage: fmt.Sprintf("%s%d", stagePrefix, undo), ID: undo}
		b, _ := json.Marshal(j)
		if err := writeAtomic(s.journalPath(), b); err != nil {
			return err
		}
		if err := crashHook("journal"); err != nil {
			return err
		}
		left, err := s.apply(cur, j)
		if err != nil {
			return fmt.Errorf("checkpoint: restore stopped part way (the next shellgate run finishes it): %w", err)
		}
		sum.leaveOut(left)
		return os.Remove(s.journalPath())
	})
	return undo, sum, err
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
	if err := json.Unmarshal(b, &j); err != nil || j.Target == "" || !strings.HasPrefix(j.Stage, stagePrefix) {
		return fmt.Errorf("checkpoint: the journal %s of an interrupted undo is damaged; remove it and check the root", s.journalPath())
	}
	os.RemoveAll(filepath.Join(s.root, j.Stage))
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
func (s *Store) apply(cur string, j journal) ([]NotRestored, error) {
	entries, err := s.diffTrees(cur, j.Target)
	if err != nil {
		return nil, err
	}
	entries, kept := keepGitlinks(entries)
	if entries, err = s.keepLeftOut(entries, j.Target); err != nil {
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
	// The stage is a directory of our own, made fresh: whatever a command
	// left at its (predictable) name — a symlink to a directory outside the
	// root, which git's checkout-index --prefix follows, as would the write
	// of the .git file — is removed first, never followed.
	stage := filepath.Join(s.root, j.Stage)
	if err := os.RemoveAll(stage); err != nil {
		return nil, err
	}
	if err := os.Mkdir(stage, 0o700); err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	writes, err := s.stageWrites(entries, j)
	if err != nil {
		return nil, err
	}
	// Deletions first: a file may make way for a directory of the same name.
	gitfile, err := s.applyDeletes(entries)
	if err != nil {
		return nil, err
	}
	if err := crashHook("deleted"); err != nil {
		return nil, err
	}
	if err := s.applyWrites(writes, stage, target); err != nil {
		return nil, err
	}
	if gitfile != nil && gitfile.status != 'D' && len(now.NotKeptGit) > 0 {
		// The .git file would replace a .git directory holding files not
		// kept: it is left as it is.
		left = append(left, NotRestored{".git", "a directory holding files over max_file_size, which checkpoints do not keep: left as it is, not replaced by the .git file the checkpoint had"})
	} else if gitfile != nil && gitfile.status != 'D' {
		if err := s.restoreGitfile(gitfile.newID, stage); err != nil {
			return nil, err
		}
	}
	// git wants these directories, which it made empty at init and no file
	// of a checkpoint brings back once removed.
	if fi, err := os.Lstat(filepath.Join(s.root, ".git", "HEAD")); err == nil && fi.Mode().IsRegular() {
		for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
			os.MkdirAll(filepath.Join(s.root, ".git", filepath.FromSlash(d)), 0o755)
		}
	}
	written := map[string]bool{}
	for _, e := range writes {
		written[e.path] = true
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
		dot := filepath.Join(s.root, filepath.FromSlash(r), ".git")
		if fi, err := os.Lstat(filepath.Join(dot, "HEAD")); err == nil && fi.Mode().IsRegular() {
			for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
				os.MkdirAll(filepath.Join(dot, filepath.FromSlash(d)), 0o755)
			}
		}
	}
	s.restoreModes(now, target, written, kept)
	return left, nil
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
func (s *Store) keepLeftOut(entries []diffEntry, target string) ([]diffEntry, error) {
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
		return entries, nil
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
		return nil, err
	}
	files := map[string][]byte{}
	for _, n := range names {
		header, rest, ok := strings.Cut(string(out), "\n")
		if !ok {
			return nil, fmt.Errorf("checkpoint: reading the ignore files of %s: short answer", target)
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
				return nil, fmt.Errorf("checkpoint: reading the ignore files of %s: bad answer %q", target, header)
			}
			if f[1] == "blob" {
				files[n] = []byte(rest[:size])
			}
			rest = rest[size+1:]
		}
		out = []byte(rest)
	}
	global := parseIgnore("", append(files["git/info/exclude"], "\n/"+stagePrefix+"*/\n"...))
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
		return err == nil && !s.keptIgnored(p, fi.Size())
	}
	out2 := entries[:0:0]
	for _, e := range entries {
		if rest, ok := strings.CutPrefix(e.path, "work/"); ok && e.status == 'D' && leftOut(rest) {
			continue
		}
		out2 = append(out2, e)
	}
	return out2, nil
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

// stageWrites checks out the files of checkpoint j.Target that entries add
// or change into j.Stage, and returns those entries.
func (s *Store) stageWrites(entries []diffEntry, j journal) ([]diffEntry, error) {
	var writes []diffEntry
	var list strings.Builder
	for _, e := range entries {
		if e.path == "modes" || e.path == "gitfile" || e.status == 'D' || e.newMode == "160000" {
			continue
		}
		writes = append(writes, e)
		list.WriteString(e.path + "\x00")
	}
	if len(writes) == 0 {
		return nil, nil
	}
	index := filepath.Join(s.dir, "index.restore")
	defer os.Remove(index)
	if _, err := s.git(nil, s.root, index, "read-tree", j.Target); err != nil {
		return nil, err
	}
	if _, err := s.git([]byte(list.String()), s.root, index, "checkout-index", "-f", "-z", "--stdin", "--prefix="+j.Stage+"/"); err != nil {
		return nil, err
	}
	return writes, nil
}

// applyDeletes removes from the root what entries delete, and returns the
// entry of the .git file, if any.
func (s *Store) applyDeletes(entries []diffEntry) (gitfile *diffEntry, err error) {
	for i, e := range entries {
		if e.path == "gitfile" {
			gitfile = &entries[i]
			if e.status == 'D' {
				if fi, err := os.Lstat(filepath.Join(s.root, ".git")); err == nil && fi.Mode().IsRegular() {
					if err := os.Remove(filepath.Join(s.root, ".git")); err != nil {
						return nil, err
					}
				}
			}
			continue
		}
		if e.status != 'D' || e.path == "modes" {
			continue
		}
		if err := s.deleteEntry(e.path); err != nil {
			return nil, err
		}
	}
	return gitfile, nil
}

// deleteEntry removes the root's file of checkpoint path p, and the
// directories of the work tree it leaves empty.
func (s *Store) deleteEntry(p string) error {
	dst, _, ok := s.dest(p)
	if !ok {
		return nil
	}
	if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		if fi, lerr := os.Lstat(dst); lerr == nil && fi.IsDir() {
			return nil // a gitlink's directory: left as it is
		}
		return err
	}
	if strings.HasPrefix(p, "work/") || strings.HasPrefix(p, "nested/") {
		s.removeEmptyParents(dst)
	}
	return nil
}

// applyWrites renames the staged files into place, with the modes target
// gives them.
func (s *Store) applyWrites(writes []diffEntry, stage string, target manifest) error {
	for i, e := range writes {
		if i == len(writes)/2 {
			if err := crashHook("half"); err != nil {
				return err
			}
		}
		dst, rel, ok := s.dest(e.path)
		if !ok {
			continue
		}
		git := strings.HasPrefix(e.path, "git/")
		src := filepath.Join(stage, filepath.FromSlash(e.path))
		if err := s.makeParents(dst); err != nil {
			return err
		}
		if e.newMode != "120000" {
			if err := os.Chmod(src, fs.FileMode(target.perm(git, rel, e.newMode == "100755"))); err != nil {
				return err
			}
		}
		if fi, err := os.Lstat(dst); err == nil && fi.IsDir() {
			if err := os.RemoveAll(dst); err != nil {
				return err
			}
		}
		if err := os.Rename(src, dst); err != nil {
			return err
		}
	}
	return nil
}

// restoreGitfile puts back the root's .git file, blob id, through stage.
func (s *Store) restoreGitfile(id, stage string) error {
	b, err := s.git(nil, "", "", "cat-file", "blob", id)
	if err != nil {
		return err
	}
	dst := filepath.Join(s.root, ".git")
	if fi, err := os.Lstat(dst); err == nil && !fi.Mode().IsRegular() {
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
	}
	tmp := filepath.Join(stage, "gitfile")
	if err := os.MkdirAll(stage, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

// restoreModes sets the modes that changed on files whose content did not
// (those not written): target's exact modes, and git's defaults where cur
// had an exact mode that target has not.
func (s *Store) restoreModes(cm, target manifest, written map[string]bool, kept []string) {
	// A file not kept, then or now, is left as it is, its mode too.
	notKept := func(p string) bool {
		_, a := cm.notKept(p)
		_, b := target.notKept(p)
		return a || b
	}
	for _, side := range []struct {
		git    bool
		prefix string
		tab    map[string]uint32
	}{{false, "work/", target.Work}, {true, "git/", target.Git}} {
		for p, perm := range side.tab {
			if written[side.prefix+p] || notKept(side.prefix+p) {
				continue
			}
			dst, _, ok := s.dest(side.prefix + p)
			if fi, err := os.Lstat(dst); ok && err == nil && fi.Mode().IsRegular() && uint32(fi.Mode().Perm()) != perm {
				chmodOwn(dst, fi, fs.FileMode(perm))
			}
		}
	}
	for _, side := range []struct {
		git        bool
		prefix     string
		cur, wants map[string]uint32
	}{{false, "work/", cm.Work, target.Work}, {true, "git/", cm.Git, target.Git}} {
		for p := range side.cur {
			if _, ok := side.wants[p]; ok || written[side.prefix+p] || !side.git && underAny(p, kept) || notKept(side.prefix+p) {
				continue
			}
			dst, _, ok := s.dest(side.prefix + p)
			if fi, err := os.Lstat(dst); ok && err == nil && fi.Mode().IsRegular() {
				if perm := defaultPerm(side.git, p, fi.Mode().Perm()&0o100 != 0); fi.Mode().Perm() != fs.FileMode(perm) {
					chmodOwn(dst, fi, fs.FileMode(perm))
				}
			}
		}
	}
}

// chmodOwn sets the permission bits of dst, the regular file fi. A file with
// more names than this one (a command may hard-link a package store's file
// outside the root in its place: the content is the checkpoint's, only the
// mode differs) gets a copy of its own first, with its bytes and times, so
// its other names keep their mode.
func chmodOwn(dst string, fi fs.FileInfo, perm fs.FileMode) error {
	if links(fi) <= 1 {
		return os.Chmod(dst, perm)
	}
	src, err := os.Open(dst)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), stagePrefix+"copy-*")
	if err != nil {
		return err
	}
	_, err = io.Copy(tmp, src)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chtimes(tmp.Name(), fi.ModTime(), fi.ModTime())
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// dest maps a checkpoint path (work/…, git/…) to the root's file, and the
// path relative to its pass.
func (s *Store) dest(p string) (string, string, bool) {
	switch {
	case strings.HasPrefix(p, "work/"):
		rel := strings.TrimPrefix(p, "work/")
		return filepath.Join(s.root, filepath.FromSlash(rel)), rel, true
	case strings.HasPrefix(p, "git/"):
		rel := strings.TrimPrefix(p, "git/")
		return filepath.Join(s.root, ".git", filepath.FromSlash(rel)), rel, true
	case strings.HasPrefix(p, "nested/"):
		// a nested repository's .git: its manifest entries are the work
		// tree's, by the path in the root
		rel := workPath(p)
		if rel == "" || path.IsAbs(rel) || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", "", false
		}
		return filepath.Join(s.root, filepath.FromSlash(rel)), rel, true
	}
	return "", "", false
}

// makeParents makes the directories leading to dst inside the root, replacing
// a file or a symlink in the way (never following one out of the root).
func (s *Store) makeParents(dst string) error {
	rel, err := filepath.Rel(s.root, filepath.Dir(dst))
	if err != nil || rel == "." {
		return err
	}
	cur := s.root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		fi, err := os.Lstat(cur)
		switch {
		case err == nil && fi.IsDir():
			continue
		case err == nil:
			if err := os.Remove(cur); err != nil {
				return err
			}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := os.Mkdir(cur, 0o755); err != nil {
			return err
		}
	}
	return nil
}

// removeEmptyParents removes the directories above a deleted file of the
// work tree that it left empty, up to the root.
func (s *Store) removeEmptyParents(p string) {
	for d := filepath.Dir(p); d != s.root && strings.HasPrefix(d, s.root+string(filepath.Separator)); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			return
		}
	}
}
