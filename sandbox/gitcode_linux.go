package sandbox

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// runsCode reports whether a protected path that git makes in place (InPlace)
// holds what would run code outside the sandbox, as one written by the command
// rather than by git would: a hook that is not one of git's samples (nor one
// git copied from the user's templates, known), or a git config with a key
// beyond what init and clone write. Anything it cannot read or parse counts
// as code.
func runsCode(p string, known hookSet) bool {
	switch filepath.Base(p) {
	case "hooks":
		return !sampleHooksAt(unix.AT_FDCWD, p, known)
	case "config":
		return !plainGitConfigAt(unix.AT_FDCWD, p)
	}
	return false
}

// sampleHooksAt reports whether the hooks directory name (in dirFD) holds
// only git's samples, regular files named *.sample, which git never runs,
// and hooks git copies from the user's templates (known), as they are there.
func sampleHooksAt(dirFD int, name string, known hookSet) bool {
	f, err := openAt(dirFD, name, unix.O_DIRECTORY)
	if err != nil {
		return false
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".sample") && !known.holds(int(f.Fd()), e.Name()) {
			return false
		}
	}
	return true
}

// hookSet is the hooks git init copies from the user's template directories
// into every repository it makes, by name and content.
type hookSet map[string]bool

// maxTemplateHook bounds a template hook read.
const maxTemplateHook = 1 << 20

func hookKey(name string, content []byte) string {
	sum := sha256.Sum256(content)
	return name + "\x00" + string(sum[:])
}

// holds reports whether the regular file name (in dirFD) is one of the set.
func (h hookSet) holds(dirFD int, name string) bool {
	if len(h) == 0 {
		return false
	}
	f, err := openAt(dirFD, name, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxTemplateHook+1))
	return err == nil && len(b) <= maxTemplateHook && h[hookKey(name, b)]
}

// templateHooks reads the hooks in the user's git template directories
// (init.templateDir in the machine's and the user's config) as they are when
// the session starts, before any command: one under a writable path is left
// out, as a command could have made it there in an earlier session.
func templateHooks(home string, writable []string) hookSet {
	var dirs []string
	configs := []string{"/etc/gitconfig"}
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	for _, c := range configs {
		scanGitConfig(unix.AT_FDCWD, c, func(section, sub, key, value string) bool {
			if section == "init" && sub == "" && key == "templatedir" {
				value = strings.Trim(value, `"`)
				if rest, ok := strings.CutPrefix(value, "~/"); ok && home != "" {
					value = filepath.Join(home, rest)
				}
				dirs = append(dirs, value)
			}
			return true
		})
	}
	set := hookSet{}
	for _, d := range dirs {
		if !filepath.IsAbs(d) || leadsInto(d, writable) {
			continue
		}
		hooks, err := openAt(unix.AT_FDCWD, filepath.Join(d, "hooks"), unix.O_DIRECTORY)
		if err != nil {
			continue
		}
		names, _ := hooks.Readdirnames(64)
		for _, n := range names {
			if f, err := openAt(int(hooks.Fd()), n, 0); err == nil {
				if b, err := io.ReadAll(io.LimitReader(f, maxTemplateHook+1)); err == nil && len(b) <= maxTemplateHook {
					set[hookKey(n, b)] = true
				}
				f.Close()
			}
		}
		hooks.Close()
	}
	return set
}

// openAt opens name in dirFD for reading: a directory with O_DIRECTORY in
// flags, else a regular file — not a symlink to follow, nor a FIFO or device
// to block on (O_NONBLOCK keeps the open itself from blocking; a FIFO made an
// os.File would still wait for a writer's data).
func openAt(dirFD int, name string, flags int) (*os.File, error) {
	fd, err := unix.Openat(dirFD, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|flags, 0)
	if err != nil {
		return nil, err
	}
	want := uint32(unix.S_IFREG)
	if flags&unix.O_DIRECTORY != 0 {
		want = unix.S_IFDIR
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != want {
		unix.Close(fd)
		return nil, fmt.Errorf("%s: not a regular file or directory", name)
	}
	// Blocking again: a regular file or directory never waits, and os.File
	// then reads it directly instead of through the poller.
	unix.SetNonblock(fd, false)
	return os.NewFile(uintptr(fd), name), nil
}

// plainKey reports whether a git config key is one that git init, clone and
// submodule write (but core.worktree, which moves the work tree), a user name
// and email, or a common setting of how pull, push, fetch, merge and rebase
// behave: none of them runs anything.
func plainKey(section, sub, key string) bool {
	switch section {
	case "core":
		return sub == "" && slices.Contains([]string{"repositoryformatversion", "filemode", "bare", "logallrefupdates", "ignorecase", "precomposeunicode", "symlinks", "autocrlf", "eol", "safecrlf", "quotepath", "sparsecheckout", "sparsecheckoutcone"}, key)
	case "extensions":
		return sub == "" && (key == "objectformat" || key == "partialclone" || key == "worktreeconfig")
	case "index":
		return sub == "" && key == "sparse"
	case "init":
		return sub == "" && key == "defaultbranch"
	case "user":
		return sub == "" && (key == "name" || key == "email")
	case "remote": // what clone --filter and --mirror write too
		return sub != "" && slices.Contains([]string{"url", "pushurl", "fetch", "mirror", "promisor", "partialclonefilter"}, key)
	case "branch":
		return sub != "" && (key == "remote" || key == "merge")
	case "submodule":
		return sub != "" && (key == "url" || key == "active")
	case "pull":
		return sub == "" && (key == "rebase" || key == "ff")
	case "push":
		return sub == "" && (key == "default" || key == "autosetupremote" || key == "followtags")
	case "fetch":
		return sub == "" && (key == "prune" || key == "prunetags")
	case "merge":
		return sub == "" && (key == "ff" || key == "conflictstyle")
	case "rebase":
		return sub == "" && (key == "autostash" || key == "autosquash")
	case "status":
		return sub == "" && (key == "showuntrackedfiles" || key == "short")
	case "commit", "tag": // test fixtures turn signing off; signing runs gpg.program, not plain
		return sub == "" && slices.Contains([]string{"gpgsign", "verbose", "cleanup", "sort"}, key)
	case "diff":
		return sub == "" && slices.Contains([]string{"renames", "algorithm", "mnemonicprefix", "noprefix", "context"}, key)
	case "log":
		return sub == "" && slices.Contains([]string{"date", "decorate", "follow", "abbrevcommit"}, key)
	case "color", "advice":
		return true
	}
	return false
}

// plainGitConfigAt reports whether the git config file name (in dirFD) sets
// only plain keys.
func plainGitConfigAt(dirFD int, name string) bool {
	return scanGitConfig(dirFD, name, func(section, sub, key, _ string) bool { return plainKey(section, sub, key) })
}

// gitHashSize is the size of the object names of the repository whose config
// file is name (in dirFD): 32 bytes for SHA-256, else 20 for SHA-1.
func gitHashSize(dirFD int, name string) int {
	size := 20
	scanGitConfig(dirFD, name, func(section, sub, key, value string) bool {
		if section == "extensions" && sub == "" && key == "objectformat" && strings.EqualFold(value, "sha256") {
			size = 32
		}
		return true
	})
	return size
}

// scanGitConfig calls each for every key of the git config file name (in
// dirFD), lower-cased but for the subsection, until it returns false. It
// reports whether it read the whole file and each returned true: a file it
// cannot read, or syntax it does not follow (continued lines, keys after a
// section header on its line, quoting), ends it.
func scanGitConfig(dirFD int, name string, each func(section, sub, key, value string) bool) bool {
	f, err := openAt(dirFD, name, 0)
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

// gitRunsFrom lists the paths in the root that the root's own git config
// makes git on the host run or read config from — core.hooksPath (a
// project's `.githooks`), an fsmonitor script, an included file, and what an
// included file names in turn; in the root's config, its config.worktree
// and the user's global config — to be protected like .git/hooks and
// .git/config: otherwise a command rewrites the hook that the user's next
// `git commit` runs.
func gitRunsFrom(root, home string) []string {
	gitDir := filepath.Join(root, ".git")
	var paths []string
	var scan func(config string, depth int)
	scan = func(config string, depth int) {
		scanGitConfig(unix.AT_FDCWD, config, func(section, sub, key, value string) bool {
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
			if p != "" && p != root && under(p, root) && !under(p, gitDir) {
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
