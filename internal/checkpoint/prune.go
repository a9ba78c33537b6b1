package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// sizeEvery is how many commands pass between two looks at the store's
// size (git count-objects), and two chances for git to pack loose objects.
const sizeEvery = 64

// prune drops the oldest records past MaxCount or MaxAge and, every
// sizeEvery commands, past MaxSize; git then forgets what no record holds.
// Counted by the command's id, which the store keeps, not per process: a
// store only one-shot runs use (one command a process) is bounded too.
// Under DeferUpkeep it only notes what is due, for Upkeep.
func (s *Store) prune(id int) error {
	if s.deferUpkeep {
		s.due.records = true
		s.due.size = s.due.size || id%sizeEvery == 0
		return nil
	}
	if err := s.pruneRecords(); err != nil {
		return err
	}
	if id%sizeEvery != 0 {
		return nil
	}
	size, err := s.Size()
	if err != nil {
		return err
	}
	return s.bound(size, true)
}

// pruneSlack: past MaxCount (MaxAge), the records go down to 31/32 of it.
const pruneSlack = 32

// pruneRecords drops the oldest records past MaxCount or MaxAge, unless git
// packs in the background: then they are left for later (due.records).
func (s *Store) pruneRecords() error {
	s.due.records = false
	now := s.o.Now()
	n := len(s.records)
	if n == 0 || n <= s.o.MaxCount && now.Sub(s.records[0].Time) <= s.o.MaxAge {
		return nil
	}
	// While git packs in the background, refs stay as they are (it reads
	// them as it starts); the records past the bounds go at a later command.
	if s.packBusy() {
		s.due.records = true
		return nil
	}
	// Past a bound, a slice goes at once (a 32nd of the count, of the
	// age): the record file is rewritten and synced once every ~30
	// commands of a full store, not at each.
	count, age := s.o.MaxCount-s.o.MaxCount/pruneSlack, s.o.MaxAge-s.o.MaxAge/pruneSlack
	// The age bound is the user's word on how long what the root held
	// stays in the store (a secret removed from the project, a file the
	// user deleted on purpose): it drops by age alone, the records of
	// destroyed work too. Nothing a command writes makes a record older.
	old := 0
	for old < n-1 && now.Sub(s.records[old].Time) > age {
		old++
	}
	if old > 0 {
		ids := map[int]bool{}
		for _, r := range s.records[:old] {
			ids[r.ID] = true
		}
		if err := s.drop(ids, "max_age ("+s.o.MaxAge.String()+")"); err != nil {
			return err
		}
		n = len(s.records)
	}
	if n <= count || n <= s.o.MaxCount && old > 0 {
		return nil
	}
	// The count bound keeps the records of destroyed work to the last, as
	// the size bound does: a thousand cheap commands (a loop writing a
	// file, ~20 s) would otherwise push out the checkpoint before an
	// `rm -rf` of the user's work. The records are decided at the looks at
	// the size (bound); those not decided since are decided here only when
	// too few others are known to have destroyed nothing, or a record to
	// drop may have made what they destroyed (no git otherwise).
	victims := countVictims(s.records, n-count)
	if s.mustDecide(victims) {
		if err := s.markDestroyed(); err != nil {
			return err
		}
		victims = countVictims(s.records, n-count)
	}
	return s.drop(victims, "max_count ("+strconv.Itoa(s.o.MaxCount)+")")
}

// firstUndecided is the index of the first ended record not yet decided
// (markDestroyed), or -1.
func (s *Store) firstUndecided() int {
	for i, r := range s.records {
		if r.Destroyed == nil && r.After != "" {
			return i
		}
	}
	return -1
}

// mustDecide reports whether records not decided yet (markDestroyed) are
// to be decided before victims are dropped: a victim is not known to have
// destroyed nothing (an undecided one may have), or is within
// destroyedWindow of the first undecided one (it may have made what that
// one destroyed: dropped first, it would make that look like the user's).
func (s *Store) mustDecide(victims map[int]bool) bool {
	first := s.firstUndecided()
	if first < 0 {
		return false
	}
	for i, r := range s.records {
		if victims[r.ID] && (r.keep() != 0 || i >= first-destroyedWindow) {
			return true
		}
	}
	return false
}

// countVictims picks the n records the count bound drops, in the order of
// Record.keep, the oldest first within each: those whose command destroyed
// no one's work but its own, those that destroyed only what was written
// while another ran, the others, those not ended; never the newest.
func countVictims(recs []Record, n int) map[int]bool { return victims(recs, n, false) }

// victims picks up to n records in the order of Record.keep, the oldest
// first within each rank, never the newest; oneRank stops at the end of the
// first rank that has any.
func victims(recs []Record, n int, oneRank bool) map[int]bool {
	out := map[int]bool{}
	for pass := range 4 {
		for _, r := range recs[:len(recs)-1] {
			if len(out) == n {
				return out
			}
			if r.keep() == pass {
				out[r.ID] = true
			}
		}
		if oneRank && len(out) > 0 {
			return out
		}
	}
	return out
}

// bound holds the store to MaxSize, the store being size bytes, or else has
// git pack its loose objects when there are many; saveCache: the scan cache
// file is written before a pack starts (see startPack).
func (s *Store) bound(size int64, saveCache bool) error {
	// The commands that ended since the last look are decided now, a few
	// at a time, not all at the first prune past MaxCount. Best effort: one
	// left undecided is decided at the next look, or the next prune.
	_ = s.markDestroyed()
	// The files only links hold (an ignored database rewritten at each
	// command leaves a version a command) take at most half of it, the
	// oldest going first: otherwise they would push out the checkpoints of
	// everything else.
	if over := s.linksSize() - s.o.MaxSize/2; over > 0 {
		size -= s.shedLinks(over)
	}
	if size > s.o.MaxSize && len(s.records) > 1 {
		return s.shrink(size)
	}
	// Packing loose objects (each takes a disk block of its own, 4 KiB for
	// a checkpoint's small tree) runs beside the commands: the first pack
	// of a new 10 000-file project's objects takes seconds.
	if pack, full := s.loosePacked(); pack {
		s.startPack(full, saveCache)
	}
	return nil
}

// DeferUpkeep has the store leave the upkeep a checkpoint used to do in the
// command's path — the records past MaxCount and MaxAge dropped, the size
// look every sizeEvery commands (a stat of every loose object) with the
// shrink or pack it calls for, and the scan cache file written (the whole
// cache encoded) — to Upkeep, which its owner calls once the command's
// answer is out (package keeper: after each answer to a checkpoint after a
// command, and before it ends). A checkpoint is complete without it: only
// the bounds wait, and a process gone before its Upkeep leaves them to the
// next one's. Call it before the first checkpoint.
func (s *Store) DeferUpkeep() {
	s.mu.Lock()
	s.deferUpkeep = true
	s.mu.Unlock()
}

// upkeepDue is what the checkpoints since the last Upkeep left to it.
type upkeepDue struct {
	records bool // records were added: MaxCount and MaxAge to apply
	size    bool // a command id a multiple of sizeEvery was given: MaxSize to look at
	cache   bool // the scan cache file is to be written
}

// upkeepHook lets tests see Upkeep's steps: "locked" (the records were
// pruned, the locks let go), "looked" (the size and the cache file, outside
// the locks), "done".
var upkeepHook = func(step string) {}

// Upkeep does what the checkpoints since it last ran left to it under
// DeferUpkeep (a no-op when nothing is due). The look at the store's size
// and the encoding of the scan cache, the slow parts, run outside the
// store's locks: a checkpoint asked for meanwhile waits only for the
// records' pruning, the cache file's rename and, when the store is past
// MaxSize, the shrink.
func (s *Store) Upkeep() error {
	s.mu.Lock()
	idle := s.due == upkeepDue{}
	s.mu.Unlock()
	if idle {
		return nil // not even the locks
	}
	var (
		due   upkeepDue
		cache scanCache
		read  int
	)
	err := s.locked(func() error {
		due, s.due = s.due, upkeepDue{}
		cache, read = s.cache, s.unsaved
		if due.records {
			if err := s.pruneRecords(); err != nil { // it keeps due.records when it must wait
				s.due = due
				return err
			}
		}
		return nil
	})
	if err != nil || !due.size && !due.cache {
		return err
	}
	// A pack is started only with the cache file naming a recorded
	// checkpoint's objects (see startPack): it is written first.
	due.cache = due.cache || due.size
	upkeepHook("locked")
	var (
		size int64
		b    []byte
	)
	if due.cache {
		// The trees of a checkpoint's cache are never changed once it is
		// taken (a later walk makes new ones): no lock is needed to read
		// them.
		b = encodeScanCache(cache, s.root)
	}
	if due.size {
		if size, err = s.Size(); err != nil {
			s.mu.Lock()
			s.due.size, s.due.cache = true, true
			s.mu.Unlock()
			return err
		}
	}
	upkeepHook("looked")
	err = s.locked(func() error {
		if b != nil {
			// Written under the locks, as a checkpoint writes it: what this
			// process last wrote is what loadScanCache compares with. The
			// files read since the encoding are left for the next write.
			s.writeScanCache(b)
			s.unsaved = max(0, s.unsaved-read)
		}
		if due.size {
			// The file names the objects of a checkpoint a record holds (the
			// newest when it was encoded): a pack keeps them.
			return s.bound(size, false)
		}
		return nil
	})
	upkeepHook("done")
	return err
}

// shrink drops records, a quarter of them at a time, until the store is
// within MaxSize, and has git forget what no record holds, in the
// foreground: git's gc removes what no ref reaches, which no checkpoint may
// write beside it. The newest record is never dropped, and the records whose
// command destroyed work no command on record made (keptBySize) go only once
// no other is left to drop: otherwise a few commands writing big files after
// an `rm -rf` would push out the one checkpoint the user wants back.
func (s *Store) shrink(size int64) error {
	s.stopPack() // gc packs it all again
	f, err := os.OpenFile(filepath.Join(s.dir, "pack.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil { // another process's pack
		return fmt.Errorf("checkpoint: lock: %w", err)
	}
	defer unlockFile(f)
	if err := s.markDestroyed(); err != nil {
		return err
	}
	why := "max_size (" + ShowSize(s.o.MaxSize) + ")"
	for tries := 0; tries < 8 && size > s.o.MaxSize && len(s.records) > 1; tries++ {
		if err := s.drop(sizeVictims(s.records, max(1, len(s.records)/4)), why); err != nil {
			return err
		}
		s.saveScanCache() // see there
		if _, err := s.git(nil, "", "", "gc", "--quiet", "--prune=now"); err != nil {
			return err
		}
		s.fanouts.Clear()
		if size, err = s.Size(); err != nil {
			return err
		}
	}
	return nil
}

// sizeVictims picks the n records shrink drops next: the oldest of the
// first rank of Record.keep that has any (those whose command destroyed no
// one's work but its own, then …); never the newest.
func sizeVictims(recs []Record, n int) map[int]bool { return victims(recs, n, true) }

// markDestroyed decides, for each finished record not yet decided, whether
// its command destroyed work (Record.Destroyed): deleted or overwrote a
// file version (of the root, its .git, a nested repository) that no recent
// command made (one of the undecided ones or the destroyedWindow records
// before them), and that the command did not leave under another name —
// the user's files, uncommitted edits, what an undo brought back, not the
// build output commands write again and again. Decided once, while the
// commands that made the versions are on record, and kept in the record
// file, so that dropping them later does not make their output look like
// the user's. One git diff-tree of those records' checkpoints: its cost
// does not grow with the store (a version made further back than the
// window and destroyed now counts as the user's: kept longer, not lost).
func (s *Store) markDestroyed() error {
	first := s.firstUndecided()
	if first < 0 {
		return nil
	}
	var in bytes.Buffer
	pairs := map[string][]int{} // "before after" -> indexes into s.records
	for i := max(0, first-destroyedWindow); i < len(s.records); i++ {
		r := s.records[i]
		if r.After == "" || r.After == r.Before {
			continue
		}
		k := r.Before + " " + r.After
		if len(pairs[k]) == 0 {
			in.WriteString(k + "\n")
		}
		pairs[k] = append(pairs[k], i)
	}
	// What was written between two commands while another ran (a job, a
	// terminal; from the one's checkpoint after to the next one's before): a job's
	// churn, or the user's own edits then, which the trees cannot tell
	// apart. A command destroying only such versions is marked Churn: its
	// record goes after those that destroyed nothing, before those that
	// destroyed what was written while none ran. Otherwise a job rewriting
	// a log between commands, each command overwriting it again, had every
	// record count as destroying work, and the bounds then dropped them
	// oldest first, the checkpoint before an `rm -rf src` with them.
	gaps := map[string]bool{}
	for i := max(0, first-destroyedWindow); i+1 < len(s.records); i++ {
		a, b := s.records[i], s.records[i+1]
		if a.After == "" || a.After == b.Before || !s.jobRan(a.End, b.Time) {
			continue
		}
		k := a.After + " " + b.Before
		if !gaps[k] && len(pairs[k]) == 0 {
			in.WriteString(k + "\n")
		}
		gaps[k] = true
	}
	var out []byte
	if in.Len() > 0 {
		var err error
		if out, err = s.git(in.Bytes(), "", "", "diff-tree", "--stdin", "-r", "--no-renames", "--raw", "--no-abbrev"); err != nil {
			return err
		}
	}
	type version struct{ path, id string }
	lost := map[int][]version{} // record index -> what its command destroyed
	made := map[version]bool{}  // versions commands on record wrote
	jobs := map[version]bool{}  // versions written between commands while a job ran
	var cur []int
	var gap bool
	var added map[string]bool // the ids the current pair's command wrote
	var gone []version
	flush := func() {
		for _, v := range gone {
			if !added[v.id] {
				for _, i := range cur {
					lost[i] = append(lost[i], v)
				}
			}
		}
		gone = nil
	}
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" {
			continue
		}
		if line[0] != ':' { // the pair the lines after it are the diff of
			flush()
			cur, added, gap = pairs[line], map[string]bool{}, gaps[line]
			continue
		}
		meta, path, ok := strings.Cut(line[1:], "\t")
		f := strings.Fields(meta)
		if !ok || len(f) < 5 || path == "modes" {
			continue
		}
		if f[3] != zeroID {
			added[f[3]] = true
			if gap {
				jobs[version{path, f[3]}] = true
			}
			for _, i := range cur {
				if s.records[i].Label != "undo" { // what an undo brings back is the user's
					made[version{path, f[3]}] = true
				}
			}
		}
		if f[2] != zeroID && f[4][0] != 'A' {
			gone = append(gone, version{path, f[2]})
		}
	}
	flush()
	var decided []any
	for i := range s.records {
		r := &s.records[i]
		if r.Destroyed != nil || r.After == "" {
			continue
		}
		d, churn := false, false
		for _, v := range lost[i] {
			if !made[v] {
				d, churn = true, jobs[v]
				if !churn {
					break
				}
			}
		}
		r.Destroyed, r.Churn = &d, churn
		decided = append(decided, Record{ID: r.ID, Destroyed: &d, Churn: churn})
	}
	// Kept in the record file (a line each, as Finish's): another
	// process, and a later prune, need not diff them again.
	return s.appendLog(decided...)
}

// jobRan reports whether a command on record ran at some time between
// from and to, the end of one command and the start of the next: a job, a
// terminal, a call that went on as a job, another session's command.
func (s *Store) jobRan(from, to time.Time) bool {
	for _, r := range s.records {
		if !r.Time.Before(to) {
			break
		}
		if r.After == "" || r.End.After(from) {
			return true
		}
	}
	return false
}

// destroyedWindow is how many records before the undecided ones
// markDestroyed looks at for the commands that made what those destroyed.
const destroyedWindow = 64

// drop forgets the records of ids: their refs go (loose files, and lines
// of packed-refs once git's gc packed them), without starting git; and
// notes what went and why (the bound it was past) for NoRecordError.
func (s *Store) drop(ids map[int]bool, why string) error {
	gone := map[string]bool{}
	var kept, dropped []Record
	for _, r := range s.records {
		if !ids[r.ID] {
			kept = append(kept, r)
			continue
		}
		dropped = append(dropped, r)
		for _, side := range []string{"-b", "-a"} {
			name := strconv.Itoa(r.ID) + side
			gone["refs/cp/"+name] = true
			if err := os.Remove(filepath.Join(s.gitDir, "refs", "cp", name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("checkpoint: %w", err)
			}
		}
	}
	packed := filepath.Join(s.gitDir, "packed-refs")
	if b, err := os.ReadFile(packed); err == nil {
		var out bytes.Buffer
		skip := false
		for _, line := range bytes.SplitAfter(b, []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			if line[0] == '^' { // the peeled id of the line before
				if !skip {
					out.Write(line)
				}
				continue
			}
			_, ref, _ := bytes.Cut(bytes.TrimRight(line, "\n"), []byte(" "))
			skip = line[0] != '#' && gone[string(ref)]
			if !skip {
				out.Write(line)
			}
		}
		if out.Len() != len(b) {
			if err := writeAtomic(packed, out.Bytes()); err != nil {
				return err
			}
		}
	}
	s.records = kept
	if err := s.rewriteLog(s.records); err != nil {
		return err
	}
	s.notePruned(dropped, why)
	// The links of ignored files only the dropped checkpoints listed go
	// with them: a link's file takes space once the root no longer has it.
	return s.pruneLinks()
}

// Size is the store's size on disk in bytes, counted as git's count-objects
// counts it (its size, size-pack and size-garbage): the loose objects, each
// rounded up to a disk block, and the files of objects/pack; and the
// ignored files kept by links that the root no longer holds (linksSize).
func (s *Store) Size() (int64, error) {
	objects := filepath.Join(s.gitDir, "objects")
	dirs, err := os.ReadDir(objects)
	if err != nil {
		return 0, fmt.Errorf("checkpoint: %w", err)
	}
	var total int64
	for _, d := range dirs {
		name := d.Name()
		if !d.IsDir() || name == "info" {
			continue
		}
		ents, err := os.ReadDir(filepath.Join(objects, name))
		if err != nil {
			continue
		}
		for _, e := range ents {
			fi, err := e.Info()
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if name == "pack" {
				total += fi.Size()
			} else {
				total += (fi.Size() + 4095) &^ 4095
			}
		}
	}
	return total + s.linksSize(), nil
}

// prunedNote is a line of the store's pruned.jsonl: which records a prune
// dropped, when, and the bound the store was past.
type prunedNote struct {
	IDs  [][2]int  `json:"ids"` // ranges, first and last
	Why  string    `json:"why"`
	Time time.Time `json:"time"`
}

// prunedKeep: pruned.jsonl keeps the last this many notes once it has twice
// as many.
const prunedKeep = 128

func (s *Store) prunedPath() string { return filepath.Join(s.dir, "pruned.jsonl") }

// notePruned adds what drop dropped to pruned.jsonl, for NoRecordError to
// say. Best effort: a note lost only makes that message vaguer.
func (s *Store) notePruned(recs []Record, why string) {
	if len(recs) == 0 {
		return
	}
	n := prunedNote{Why: why, Time: s.o.Now().UTC()}
	for _, r := range recs {
		if l := len(n.IDs); l > 0 && n.IDs[l-1][1] == r.ID-1 {
			n.IDs[l-1][1] = r.ID
		} else {
			n.IDs = append(n.IDs, [2]int{r.ID, r.ID})
		}
	}
	b, err := json.Marshal(n)
	if err != nil {
		return
	}
	notes := s.prunedNotes()
	if len(notes) >= 2*prunedKeep {
		var all bytes.Buffer
		for _, o := range notes[len(notes)-prunedKeep:] {
			line, _ := json.Marshal(o)
			all.Write(append(line, '\n'))
		}
		all.Write(append(b, '\n'))
		writeAtomic(s.prunedPath(), all.Bytes())
		return
	}
	f, err := os.OpenFile(s.prunedPath(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	f.Write(append(b, '\n'))
	f.Close()
}

// prunedNotes reads pruned.jsonl (none when it is missing or unreadable).
func (s *Store) prunedNotes() []prunedNote {
	b, err := os.ReadFile(s.prunedPath())
	if err != nil {
		return nil
	}
	var out []prunedNote
	for _, line := range bytes.Split(b, []byte("\n")) {
		var n prunedNote
		if json.Unmarshal(line, &n) == nil && n.Why != "" {
			out = append(out, n)
		}
	}
	return out
}

// prunedWhy says when and why record id was dropped, "" when no note says.
func (s *Store) prunedWhy(id int) string {
	notes := s.prunedNotes()
	for i := len(notes) - 1; i >= 0; i-- {
		for _, r := range notes[i].IDs {
			if r[0] <= id && id <= r[1] {
				return "dropped " + notes[i].Time.Local().Format("2006-01-02 15:04:05") + " to hold the store to " + notes[i].Why
			}
		}
	}
	return ""
}
