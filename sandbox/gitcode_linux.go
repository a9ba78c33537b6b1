package sandbox

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// runsCode reports whether a protected path that git makes in place (InPlace)
// holds what would run code outside the sandbox, as one written by the command
// rather than by git would: a hook that is not one of git's samples, or a git
// config with a key beyond what init and clone write. Anything it cannot read
// or parse counts as code.
func runsCode(p string) bool {
	switch filepath.Base(p) {
	case "hooks":
		entries, err := os.ReadDir(p)
		if err != nil {
			return true
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".sample") || !e.Type().IsRegular() {
				return true
			}
		}
		return false
	case "config":
		return !plainGitConfig(p)
	}
	return false
}

// plainKey reports whether a git config key is one that git init and clone
// write, or a user name and email: none of them runs anything.
func plainKey(section, sub, key string) bool {
	switch section {
	case "core":
		return sub == "" && slices.Contains([]string{"repositoryformatversion", "filemode", "bare", "logallrefupdates", "ignorecase", "precomposeunicode", "symlinks", "autocrlf"}, key)
	case "extensions":
		return sub == "" && key == "objectformat"
	case "init":
		return sub == "" && key == "defaultbranch"
	case "user":
		return sub == "" && (key == "name" || key == "email")
	case "remote":
		return sub != "" && (key == "url" || key == "fetch")
	case "branch":
		return sub != "" && (key == "remote" || key == "merge")
	}
	return false
}

// plainGitConfig reports whether the git config file at p sets only plain keys.
func plainGitConfig(p string) bool {
	// Not a FIFO to block on, nor a symlink to follow, nor a huge file.
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
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
			key, _, _ := strings.Cut(line, "=")
			if !plainKey(section, sub, strings.ToLower(strings.TrimSpace(key))) {
				return false
			}
		}
	}
	return lines.Err() == nil
}
