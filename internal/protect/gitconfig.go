package protect

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
)

// openRegular opens name for reading if it is a regular file: not a FIFO
// or device to block on (O_NONBLOCK keeps the open itself from blocking),
// nor a directory.
func openRegular(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, errors.New(name + ": not a regular file")
	}
	return f, nil
}

// readGitFile reads a .git file or a commondir: a regular file of at most 4
// KiB. A command may leave a FIFO there, which os.ReadFile would wait on
// forever, or a symlink to /dev/zero, which it would read until shellgate
// runs out of memory, at the next session's start.
func readGitFile(name string) ([]byte, error) {
	f, err := openRegular(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4097))
	if err == nil && len(b) > 4096 {
		err = errors.New(name + ": too long for a .git file")
	}
	return b, err
}

// within reports whether p is dir or lies beneath it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// scanGitConfig calls each for every key of the git config file name,
// lower-cased but for the subsection, until it returns false. It
// reports whether it read the whole file and each returned true: a file it
// cannot read, or syntax it does not follow (continued lines, keys after a
// section header on its line, quoting), ends it.
func scanGitConfig(name string, each func(section, sub, key, value string) bool) bool {
	f, err := openRegular(name)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return false
	}
	var section, sub string
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			end := strings.IndexByte(line, ']')
			if end < 0 || strings.TrimSpace(line[end+1:]) != "" {
				return false
			}
			name, quoted, hasSub := strings.Cut(line[1:end], " ")
			sub = ""
			if hasSub {
				quoted = strings.TrimSpace(quoted)
				if len(quoted) < 2 || quoted[0] != '"' || quoted[len(quoted)-1] != '"' || strings.ContainsAny(quoted[1:len(quoted)-1], `"\`) {
					return false
				}
				sub = quoted[1 : len(quoted)-1]
			} else if name, sub, hasSub = strings.Cut(name, "."); hasSub && sub == "" {
				return false
			}
			section = strings.ToLower(name)
		default:
			key, value, _ := strings.Cut(line, "=")
			if !each(section, sub, strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)) {
				return false
			}
		}
	}
	return lines.Err() == nil
}

// GitRunsFrom lists the paths in the root that the root's own git config
// makes git on the host run or read config from — in the root's config, its
// config.worktree and the user's global config — to be protected like
// .git/hooks and .git/config: otherwise a command rewrites the hook, filter
// or fsmonitor script that the user's next `git commit` or `git add` runs.
// Every key counts, not a list of those that run programs: git grows new
// ones (filter.*.clean, diff.*.textconv, merge.*.driver, core.sshCommand,
// an alias's `!sh tools/x`), and a word of any value that names a path in
// the root (one that exists, or any with a slash) is protected, .git's
// files included (an fsmonitor script kept in .git); an included file is
// read in turn. linked is what LinkedGitDir read of the root (the zero
// Linked where the root's .git is a directory): read once per session, so
// that every part of the session's view follows the same .git.
func GitRunsFrom(root, home string, linked Linked) []string {
	gitDir := filepath.Join(root, ".git")
	var paths []string
	add := func(p string) {
		if p != root && p != gitDir && within(p, root) {
			paths = append(paths, p)
		}
	}
	var scan func(config string, depth int)
	scan = func(config string, depth int) {
		scanGitConfig(config, func(section, sub, key, value string) bool {
			value = strings.Trim(value, `"`)
			if (section == "include" || section == "includeif") && key == "path" {
				p := value // relative to the including file
				if !filepath.IsAbs(p) {
					p = filepath.Join(filepath.Dir(config), value)
				}
				add(filepath.Clean(p))
				if depth < 4 {
					scan(p, depth+1)
				}
				return true
			}
			for _, p := range valuePaths(root, value, section == "core" && key == "hookspath") {
				add(p)
			}
			return true
		})
	}
	// The user's own config too: a relative core.hooksPath there names a
	// directory in every project.
	configs := []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree")}
	if linked.GitDir != "" { // a linked worktree's, outside the root
		configs = []string{filepath.Join(linked.Common, "config"), filepath.Join(linked.GitDir, "config.worktree")}
	}
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	for _, c := range configs {
		scan(c, 0)
	}
	return paths
}

// NestedRunsFrom is GitRunsFrom for a repository nested in the root, top
// being its work tree: its git directory is its .git, or the one its .git
// file names (a submodule's, in the root's .git/modules).
func NestedRunsFrom(top, home string) []string {
	var l Linked
	if b, err := readGitFile(filepath.Join(top, ".git")); err == nil {
		gitDir, ok := gitFileDir(top, b)
		if !ok {
			return nil
		}
		l = Linked{GitDir: gitDir, Common: gitDir}
	}
	return GitRunsFrom(top, home, l)
}

// valuePaths are the paths in root that a config value's words name, as git
// runs them from the top of the work tree (a hooks directory, a script, the
// file a shell command reads): an absolute word, one with a slash or a
// leading dot (`.githooks`), or a bare word naming what exists there (`sh
// conv.sh`). Options, URLs,
// variables and patterns name no file.
func valuePaths(root, value string, isPath bool) []string {
	words := strings.FieldsFunc(value, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(";|&()<>'\"`=,", r)
	})
	// A value of one bare word is a name, not a file of the project: a
	// branch (init.defaultBranch = main), a mode (core.autocrlf = input), a
	// program git finds on PATH; a directory or a build output so named stays
	// writable. Only a key whose value is a path (core.hooksPath) names one.
	bareNames := len(words) > 1 || isPath
	var ps []string
	for _, w := range words {
		w = strings.TrimLeft(w, "!") // an alias's shell command
		if w == "" || w[0] == '-' || strings.Contains(w, "://") || strings.ContainsAny(w, "$~*?[") {
			continue
		}
		p := filepath.Clean(w)
		if !filepath.IsAbs(w) {
			p = filepath.Join(root, w)
		}
		if _, err := os.Lstat(p); err == nil && bareNames || strings.Contains(w, "/") || w[0] == '.' {
			ps = append(ps, p)
		}
	}
	return ps
}
