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
// ignored file is not (only the small ones are kept).
func Covers(root, path string) bool {
	root, path = filepath.Clean(root), filepath.Clean(path)
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return false
	}
	if fi, err := os.Lstat(filepath.Join(root, ".git")); err == nil && !fi.IsDir() {
		return false // the root's repository is elsewhere
	}
	if rel == "." {
		return true
	}
	s := &Store{root: root}
	ign := &ignoreStack{global: s.globalIgnore()}
	abs, walked := root, ""
	if ents, err := os.ReadDir(root); err == nil {
		ign = ign.push(readIgnore(root, "", ents))
	}
	names := strings.Split(filepath.ToSlash(rel), "/")
	for i, name := range names {
		abs = filepath.Join(abs, name)
		walked = joinRel(walked, name)
		if name == ".git" {
			// a .git directory is kept whole (the root's, a nested one's)
			fi, err := os.Lstat(abs)
			return err != nil || fi.IsDir()
		}
		fi, err := os.Lstat(abs)
		if err != nil {
			// made by the command: kept from then on, unless ignored
			for j := i; ; {
				if names[j] == ".git" {
					return true
				}
				if ign.excluded(walked, true) {
					return false
				}
				if j++; j == len(names) {
					return true
				}
				walked = joinRel(walked, names[j])
			}
		}
		if !fi.IsDir() {
			return fi.Mode().IsRegular() && !ign.excluded(walked, false)
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
		}
		ign = ign.push(readIgnore(abs, walked, ents))
	}
	return true
}
