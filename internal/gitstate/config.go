package gitstate

import (
	"bytes"
	"strings"
)

// cloneKeys are the keys git itself writes into a repository's config when
// it makes, clones or initialises one (git init, git clone, git submodule
// update --init, --recursive), and the identity a user sets there: none of
// them makes git run a program, read another config or look elsewhere for
// hooks. Keys are "section.key", a subsection left out.
var cloneKeys = map[string]bool{
	"core.repositoryformatversion": true, "core.filemode": true, "core.bare": true,
	"core.logallrefupdates": true, "core.worktree": true, "core.symlinks": true,
	"core.ignorecase": true, "core.precomposeunicode": true,
	"remote.url": true, "remote.fetch": true, "remote.tagopt": true,
	"remote.promisor": true, "remote.partialclonefilter": true, "remote.mirror": true,
	"branch.remote": true, "branch.merge": true,
	"submodule.url": true, "submodule.active": true,
	"extensions.objectformat": true, "extensions.refstorage": true,
	"user.name": true, "user.email": true,
}

// ConfigUnknown returns the first key of a git config file (data) that git
// does not write there itself (cloneKeys), as git names it
// ("core.fsmonitor"), or "" when it has none. What git would run or follow
// (core.fsmonitor, core.hooksPath, include.path, a filter, an alias …) is
// always such a key. A line it cannot read counts as such a key too.
func ConfigUnknown(data []byte) string {
	section, sub := "", false
	lines := bytes.Split(data, []byte("\n"))
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(string(lines[i]))
		for strings.HasPrefix(line, "[") {
			end := sectionEnd(line)
			if end < 0 {
				return line
			}
			name := line[1:end]
			section, sub = strings.ToLower(strings.TrimSpace(name)), false
			if q := strings.IndexByte(name, '"'); q >= 0 {
				section, sub = strings.ToLower(strings.TrimSpace(name[:q])), true
			} else if dot := strings.IndexByte(section, '.'); dot >= 0 {
				section, sub = section[:dot], true // [section.sub], the old form
			}
			line = strings.TrimSpace(line[end+1:]) // a key may follow on the same line
		}
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		key := line
		if eq := strings.IndexByte(line, '='); eq >= 0 {
			key = line[:eq]
		} else if sp := strings.IndexAny(line, " \t#;"); sp >= 0 {
			key = line[:sp]
		}
		key = strings.ToLower(strings.TrimSpace(key))
		name := section + "." + key
		if section == "" || !cloneKeys[name] || (section == "core" || section == "extensions" || section == "user") == sub {
			return name
		}
		// A value continued on the next line (an odd run of backslashes at
		// its end): the next lines are the value's.
		for continued(line) && i+1 < len(lines) {
			i++
			line = strings.TrimSpace(string(lines[i]))
		}
	}
	return ""
}

// continued reports whether a config line goes on on the next: it ends in
// an odd number of backslashes.
func continued(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// sectionEnd is the index of the ] that ends a section header at the start
// of line, past a quoted subsection (which may hold one), or -1.
func sectionEnd(line string) int {
	quoted := false
	for i := 1; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && quoted:
			i++
		case c == '"':
			quoted = !quoted
		case c == ']' && !quoted:
			return i
		}
	}
	return -1
}
