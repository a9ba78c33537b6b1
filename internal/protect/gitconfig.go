package protect

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
// makes git on the host run or read config from — core.hooksPath (a
// project's `.githooks`), an fsmonitor script, an included file, and what an
// included file names in turn; in the root's config, its config.worktree
// and the user's global config — to be protected like .git/hooks and
// .git/config: otherwise a command rewrites the hook that the user's next
// `git commit` runs. linked is what LinkedGitDir read of the root (the zero
// Linked where the root's .git is a directory): read once per session, so
// that every part of the session's view follows the same .git.
func GitRunsFrom(root, home string, linked Linked) []string {
	gitDir := filepath.Join(root, ".git")
	var paths []string
	var scan func(config string, depth int)
	scan = func(config string, depth int) {
		scanGitConfig(config, func(section, sub, key, value string) bool {
			value = strings.Trim(value, `"`)
			var p string
			include := false
			switch {
			case section == "core" && sub == "" && key == "hookspath":
				p = filepath.Join(root, value) // relative to the work tree
			case section == "core" && sub == "" && key == "fsmonitor" && !gitBool(value) && !strings.ContainsAny(value, " \t;|&$`"):
				p = filepath.Join(root, value) // a script, not the built-in daemon
			case (section == "include" || section == "includeif") && key == "path":
				p, include = filepath.Join(filepath.Dir(config), value), true // relative to the including file
			}
			if p != "" && filepath.IsAbs(value) {
				p = filepath.Clean(value)
			}
			if p != "" && p != root && within(p, root) && !within(p, gitDir) {
				paths = append(paths, p)
			}
			if include && depth < 4 {
				scan(p, depth+1)
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

// gitBool reports whether a config value is one of git's boolean spellings.
func gitBool(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "1", "0", "":
		return true
	}
	return false
}
