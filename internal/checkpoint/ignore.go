package checkpoint

import (
	"bytes"
	"strings"
)

// The checkpoint's own reading of ignore files, as git reads them (dir.c,
// wildmatch.c of git 2.39): a walk asks it about each entry instead of
// running git. Only what checkpoints use is here: the .gitignore of each
// directory, deepest first, then one list for the whole root (the project's
// .git/info/exclude and the store's own lines); no global excludes file (the
// store's git never read one), case-sensitive.

// ignorePattern is one line of an ignore file.
type ignorePattern struct {
	pat      string
	negative bool
	mustDir  bool // ended with a slash: matches directories only
	noDir    bool // no slash in it: matches the base name at any depth
}

// ignoreList is the patterns of one file, relative to base ("" the root,
// else "dir/sub").
type ignoreList struct {
	base     string
	patterns []ignorePattern
}

// parseIgnore reads an ignore file's lines as git does: a UTF-8 BOM, blank
// lines and # comments skipped, CR before LF and unescaped trailing spaces
// dropped.
func parseIgnore(base string, data []byte) *ignoreList {
	l := &ignoreList{base: base}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		s := trimTrailingSpaces(string(line))
		if s == "" {
			continue
		}
		var p ignorePattern
		if s[0] == '!' {
			p.negative = true
			s = s[1:]
		}
		if strings.HasSuffix(s, "/") {
			p.mustDir = true
			s = s[:len(s)-1]
		}
		if !strings.Contains(s, "/") {
			p.noDir = true
		}
		if s == "" && !p.mustDir {
			continue
		}
		p.pat = s
		l.patterns = append(l.patterns, p)
	}
	return l
}

// trimTrailingSpaces drops trailing spaces not escaped by a backslash.
func trimTrailingSpaces(s string) string {
	end := -1 // where a run of trailing spaces starts
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			if end < 0 {
				end = i
			}
		case '\\':
			i++
			end = -1
		default:
			end = -1
		}
	}
	if end >= 0 {
		return s[:end]
	}
	return s
}

// match reports whether the list decides about path (relative to the root,
// slash-separated; base its last element), and if so whether it is
// excluded: the last pattern that matches decides.
func (l *ignoreList) match(path, base string, isDir bool) (decided, excluded bool) {
	for i := len(l.patterns) - 1; i >= 0; i-- {
		p := &l.patterns[i]
		if p.mustDir && !isDir {
			continue
		}
		if p.noDir {
			if wildmatch(p.pat, base, false) {
				return true, !p.negative
			}
			continue
		}
		// Relative to the list's directory; a leading slash only anchors.
		pat := strings.TrimPrefix(p.pat, "/")
		name := path
		if l.base != "" {
			if !strings.HasPrefix(path, l.base+"/") {
				continue
			}
			name = path[len(l.base)+1:]
		}
		if wildmatch(pat, name, true) {
			return true, !p.negative
		}
	}
	return false, false
}

// ignoreStack is the lists that apply in one directory: its own .gitignore
// and its parents', deepest last, and the root-wide list. It is never
// changed once made, so the walk's goroutines share it.
type ignoreStack struct {
	parent *ignoreStack
	list   *ignoreList // nil: no .gitignore here
	global *ignoreList
}

func (st *ignoreStack) push(l *ignoreList) *ignoreStack {
	if l == nil || len(l.patterns) == 0 {
		return st
	}
	return &ignoreStack{parent: st, list: l, global: st.global}
}

// excluded reports whether path is ignored (its parents being not).
func (st *ignoreStack) excluded(path string, isDir bool) bool {
	base := path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		base = path[i+1:]
	}
	for s := st; s != nil; s = s.parent {
		if s.list == nil {
			continue
		}
		if ok, ex := s.list.match(path, base, isDir); ok {
			return ex
		}
	}
	if st.global != nil {
		if ok, ex := st.global.match(path, base, isDir); ok {
			return ex
		}
	}
	return false
}

// wildmatch is git's wildmatch(): with pathname, '*', '?' and classes do not
// match a slash and "**" between slashes matches any number of directories.
func wildmatch(pattern, text string, pathname bool) bool {
	return dowild(pattern, text, pathname) == wmMatch
}

const (
	wmMatch = iota
	wmNoMatch
	wmAbortAll
	wmAbortToStarStar
)

// dowild is git's dowild(): one of the wm results.
func dowild(p, text string, pathname bool) int {
	pi, ti := 0, 0
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		pch := p[pi]
		var tch byte
		if ti < len(text) {
			tch = text[ti]
		} else if pch != '*' {
			return wmAbortAll
		}
		switch pch {
		case '\\':
			pi++
			if pi >= len(p) || tch != p[pi] {
				return wmNoMatch
			}
		case '?':
			if pathname && tch == '/' {
				return wmNoMatch
			}
		case '*':
			var alone bool
			pi, alone = stars(p, pi)
			matchSlash := alone || !pathname
			switch {
			case alone && pi < len(p) && p[pi] == '/' && dowild(p[pi+1:], text[ti:], pathname) == wmMatch:
				return wmMatch // "**/" matched no directory
			case pi == len(p):
				// A trailing "**" matches everything, a trailing "*" what
				// has no more slashes.
				if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
					return wmNoMatch
				}
				return wmMatch
			case !matchSlash && p[pi] == '/':
				// One star then a slash: the rest of this directory's name.
				j := strings.IndexByte(text[ti:], '/')
				if j < 0 {
					return wmNoMatch
				}
				ti += j
				continue // the slash is matched by the loop's next round
			}
			return afterStar(p[pi:], text, ti, matchSlash, pathname)
		case '[':
			end, in, ok := bracket(p, pi, tch)
			if !ok {
				return wmAbortAll
			}
			if !in || (pathname && tch == '/') {
				return wmNoMatch
			}
			pi = end
		default:
			if tch != pch {
				return wmNoMatch
			}
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// stars reads the run of stars that starts at p[pi]: where the pattern goes
// on, and whether it is a "**" alone between slashes (or the pattern's
// ends), which matches across them.
func stars(p string, pi int) (end int, alone bool) {
	pi++
	if pi >= len(p) || p[pi] != '*' {
		return pi, false
	}
	prev := pi - 2
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	alone = (prev < 0 || p[prev] == '/') &&
		(pi == len(p) || p[pi] == '/' || (p[pi] == '\\' && pi+1 < len(p) && p[pi+1] == '/'))
	return pi, alone
}

// afterStar matches rest, what follows a star, against text from each
// position from ti on.
func afterStar(rest, text string, ti int, matchSlash, pathname bool) int {
	for ; ti < len(text); ti++ {
		if !isGlobSpecial(rest[0]) {
			// Skip ahead to the literal that follows the star.
			for ti < len(text) && (matchSlash || text[ti] != '/') && text[ti] != rest[0] {
				ti++
			}
			if ti >= len(text) || text[ti] != rest[0] {
				return wmNoMatch
			}
		}
		if m := dowild(rest, text[ti:], pathname); m != wmNoMatch {
			if !matchSlash || m != wmAbortToStarStar {
				return m
			}
		} else if !matchSlash && text[ti] == '/' {
			return wmAbortToStarStar
		}
	}
	return wmAbortAll
}

// bracket matches the bracket expression at p[pi] ('[') against tch: the
// index of its closing ']', whether tch is in the set it names, and false
// for an expression never closed or naming an unknown class.
func bracket(p string, pi int, tch byte) (end int, in, ok bool) {
	pi++
	if pi >= len(p) {
		return pi, false, false
	}
	negated := p[pi] == '!' || p[pi] == '^'
	if negated {
		pi++
		if pi >= len(p) {
			return pi, false, false
		}
	}
	var prev byte
	matched := false
	for {
		var m bool
		if pi, prev, m, ok = bracketItem(p, pi, prev, tch); !ok {
			return pi, false, false
		}
		matched = matched || m
		pi++
		if pi >= len(p) {
			return pi, false, false
		}
		if p[pi] == ']' {
			return pi, matched != negated, true
		}
	}
}

// bracketItem matches the item of a bracket expression at p[pi] (after
// prev) against tch: where it ends, what is prev to the next item (0 after a
// range or a class), whether tch matched, and false where it is malformed.
func bracketItem(p string, pi int, prev, tch byte) (end int, last byte, m, ok bool) {
	pch := p[pi]
	switch {
	case pch == '\\':
		pi, pch, ok = escaped(p, pi)
		return pi, pch, ok && tch == pch, ok
	case pch == '-' && prev != 0 && pi+1 < len(p) && p[pi+1] != ']':
		pi, pch, ok = escaped(p, pi+1)
		return pi, 0, ok && tch <= pch && tch >= prev, ok
	case pch == '[' && pi+1 < len(p) && p[pi+1] == ':':
		return posixClass(p, pi, tch)
	}
	return pi, pch, tch == pch, true
}

// escaped is the byte at p[pi], or the one after it if it is a backslash,
// and its index; false past the end.
func escaped(p string, pi int) (int, byte, bool) {
	if p[pi] == '\\' {
		pi++
		if pi >= len(p) {
			return pi, 0, false
		}
	}
	return pi, p[pi], true
}

// posixClass matches "[:name:]" at p[pi] against tch, as bracketItem; a
// '[' not followed by a closed class is a plain '['.
func posixClass(p string, pi int, tch byte) (end int, last byte, m, ok bool) {
	s := pi + 2
	j := strings.IndexByte(p[s:], ']')
	if j < 0 {
		return pi, 0, false, false
	}
	j += s
	if j == s || p[j-1] != ':' {
		return pi, '[', tch == '[', true
	}
	m, ok = charClass(p[s:j-1], tch)
	return j, 0, m, ok
}

func isGlobSpecial(c byte) bool { return c == '*' || c == '?' || c == '[' || c == '\\' }

// charClass is [:name:] of c; ok false for an unknown name.
func charClass(name string, c byte) (m, ok bool) {
	class, ok := charClasses[name]
	return ok && class(c), ok
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isPrint(c byte) bool { return c >= 0x20 && c < 0x7f }

// charClasses are the classes of git's wildmatch, in the C locale.
var charClasses = map[string]func(c byte) bool{
	"alnum":  func(c byte) bool { return isLower(c) || isUpper(c) || isDigit(c) },
	"alpha":  func(c byte) bool { return isLower(c) || isUpper(c) },
	"blank":  func(c byte) bool { return c == ' ' || c == '\t' },
	"cntrl":  func(c byte) bool { return c < 0x20 || c == 0x7f },
	"digit":  isDigit,
	"graph":  func(c byte) bool { return isPrint(c) && c != ' ' },
	"lower":  isLower,
	"print":  isPrint,
	"punct":  func(c byte) bool { return isPrint(c) && c != ' ' && !isLower(c) && !isUpper(c) && !isDigit(c) },
	"space":  func(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') },
	"upper":  isUpper,
	"xdigit": func(c byte) bool { return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') },
}
