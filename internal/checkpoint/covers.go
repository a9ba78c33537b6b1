package checkpoint

import (
	"os"
	"path/filepath"
	"strings"
)

// Covers reports whether a checkpoint of root keeps path (a directory git
// works in, or a file or directory it names) and all that git may change
// there: path is inside root, none of the directories leading to it is one
// a checkpoint leaves out (ignored, or a symlink), and the repository it is
// in has its .git inside root — the root's own, a nested repository's
// .git directory, or a .git file naming a directory inside root (a
// submodule's, in the root's .git/modules); a worktree's .git file pointing
// out of the root is not followed, and is not covered. What does not exist
// yet is covered unless the rules where it would be made ignore it; an
// ignored file is not (only the small ones are kept). Nor is a place whose
// repository's working files (or .git, less its objects) hold a file over
// maxFileSize (0: DefaultMaxFileSize), which a checkpoint does not keep:
// git reset --hard, clean or checkout there may take what undo cannot put
// back. That looks at every file of the repository (an lstat each), once
// per line the policy would let through for undo.
func Covers(root, path string, maxFileSize int64) bool {
	if maxFileSize <= 0 {
		maxFileSize = DefaultMaxFileSize
	}
	root, path = filepath.Clean(root), filepath.Clean(path)
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return false
	}
	if fi, err := os.Lstat(filepath.Join(root, ".git")); err == nil && !fi.IsDir() {
		return false // the root's repository is elsewhere
	}
	s := &Store{root: root}
	ign := &ignoreStack{global: s.globalIgnore()}
	abs, walked := root, ""
	if ents, err := os.ReadDir(root); err == nil {
		ign = ign.push(readIgnore(root, "", ents))
	}
	// The repository git works in: the root's, or the deepest nested one
	// on the way.
	top, topRel, topIgn := root, "", ign
	noBig := func() bool { return !bigBeneath(s, top, topRel, topIgn, maxFileSize) }
	if rel == "." {
		return noBig()
	}
	names := strings.Split(filepath.ToSlash(rel), "/")
	for i, name := range names {
		abs = filepath.Join(abs, name)
		walked = joinRel(walked, name)
		if name == ".git" {
			// a .git directory is kept whole (the root's, a nested one's)
			fi, err := os.Lstat(abs)
			return (err != nil || fi.IsDir()) && noBig()
		}
		fi, err := os.Lstat(abs)
		if err != nil {
			// made by the command: kept from then on, unless ignored
			for j := i; ; {
				if names[j] == ".git" {
					return noBig()
				}
				if ign.excluded(walked, true) {
					return false
				}
				if j++; j == len(names) {
					return noBig()
				}
				walked = joinRel(walked, names[j])
			}
		}
		if !fi.IsDir() {
			return fi.Mode().IsRegular() && !ign.excluded(walked, false) && fi.Size() <= maxFileSize && noBig()
		}
		if ign.excluded(walked, true) {
			return false
		}
		ents, err := os.ReadDir(abs)
		if err != nil {
			return false
		}
		if hasGit(ents) {
			if gfi, err := os.Lstat(filepath.Join(abs, ".git")); err == nil && !gfi.IsDir() && s.gitfileTarget(abs) == "" {
				return false // a worktree of a repository outside the root
			}
			ign = s.repoIgnore(abs, walked)
			top, topRel, topIgn = abs, walked, ign.push(readIgnore(abs, walked, ents))
		}
		ign = ign.push(readIgnore(abs, walked, ents))
	}
	return noBig()
}

// bigBeneath reports a file over max among what a checkpoint keeps of the
// repository at abs (rel in the root; ign its ignore rules, its own
// .gitignore's included): its working files, not ignored, nested
// repositories' included, and its .git's less objects/ (git's objects are
// never rewritten in place: git reset, clean, checkout, stash drop and
// branch -D leave them; a pack over max stays where it is).
func bigBeneath(s *Store, abs, rel string, ign *ignoreStack, max int64) bool {
	return bigIn(s, abs, rel, ign, max, true)
}

// bigIn is bigBeneath of directory abs, listed once and its entries stat'ed
// through its descriptor, as a checkpoint's walk does; ign is its parent's
// rules (top: its own already).
func bigIn(s *Store, abs, rel string, ign *ignoreStack, max int64, top bool) bool {
	ents, stat, done, err := readDir(abs)
	if err != nil {
		return false
	}
	defer done()
	if !top {
		if hasGit(ents) {
			ign = s.repoIgnore(abs, rel)
		}
		ign = ign.push(readIgnore(abs, rel, ents))
	}
	for _, e := range ents {
		name := e.Name()
		path := joinRel(rel, name)
		switch {
		case name == ".git" && e.IsDir():
			if gitBig(filepath.Join(abs, name), "", max) {
				return true
			}
		case e.IsDir():
			if !ign.excluded(path, true) && bigIn(s, filepath.Join(abs, name), path, ign, max, false) {
				return true
			}
		case e.Type().IsRegular():
			if ign.excluded(path, false) {
				continue // ignored: git leaves it unless -x, which is never covered
			}
			if st, err := stat(name); err == nil && st.size > max {
				return true
			}
		}
	}
	return false
}

// gitBig reports a file over max in a .git directory, objects/ left out.
func gitBig(abs, rel string, max int64) bool {
	ents, err := os.ReadDir(abs)
	if err != nil {
		return false
	}
	for _, e := range ents {
		path := joinRel(rel, e.Name())
		switch {
		case path == "objects":
		case e.IsDir():
			if gitBig(filepath.Join(abs, e.Name()), path, max) {
				return true
			}
		case e.Type().IsRegular():
			if fi, err := e.Info(); err == nil && fi.Size() > max {
				return true
			}
		}
	}
	return false
}
