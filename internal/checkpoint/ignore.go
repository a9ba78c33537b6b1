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
			var matchSlash bool
			pi++
			if pi < len(p) && p[pi] == '*' {
				prev := pi - 2
				for pi < len(p) && p[pi] == '*' {
					pi++
				}
				if (prev < 0 || p[prev] == '/') &&
					(pi == len(p) || p[pi] == '/' || (p[pi] == '\\' && pi+1 < len(p) && p[pi+1] == '/')) {
					if pi < len(p) && p[pi] == '/' && dowild(p[pi+1:], text[ti:], pathname) == wmMatch {
						return wmMatch
					}
					matchSlash = true
				} else {
					matchSlash = !pathname
				}
			} else {
				matchSlash = !pathname
			}
			if pi == len(p) {
				// A trailing "**" matches everything, a trailing "*" what
				// has no more slashes.
				if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
					return wmNoMatch
				}
				return wmMatch
			}
			if !matchSlash && p[pi] == '/' {
				// One star then a slash: the rest of this directory's name.
				j := strings.IndexByte(text[ti:], '/')
				if j < 0 {
					return wmNoMatch
				}
				ti += j
				// the slash is matched by the loop's next round
				continue
			}
			for {
				if ti >= len(text) {
					break
				}
				if !isGlobSpecial(p[pi]) {
					// Skip ahead to the literal that follows the star.
					for ti < len(text) && (matchSlash || text[ti] != '/') && text[ti] != p[pi] {
						ti++
					}
					if ti >= len(text) || text[ti] != p[pi] {
						return wmNoMatch
					}
				}
				if m := dowild(p[pi:], text[ti:], pathname); m != wmNoMatch {
					if !matchSlash || m != wmAbortToStarStar {
						return m
					}
				} else if !matchSlash && text[ti] == '/' {
					return wmAbortToStarStar
				}
				ti++
			}
			return wmAbortAll
		case '[':
			pi++
			if pi >= len(p) {
				return wmAbortAll
			}
			pch = p[pi]
			if pch == '^' {
				pch = '!'
			}
			negated := pch == '!'
			if negated {
				pi++
				if pi >= len(p) {
					return wmAbortAll
				}
				pch = p[pi]
			}
			var prev byte
			matched := false
			for {
				switch {
				case pch == '\\':
					pi++
					if pi >= len(p) {
						return wmAbortAll
					}
					pch = p[pi]
					if tch == pch {
						matched = true
					}
				case pch == '-' && prev != 0 && pi+1 < len(p) && p[pi+1] != ']':
					pi++
					pch = p[pi]
					if pch == '\\' {
						pi++
						if pi >= len(p) {
							return wmAbortAll
						}
						pch = p[pi]
					}
					if tch <= pch && tch >= prev {
						matched = true
					}
					pch = 0 // prev becomes 0
				case pch == '[' && pi+1 < len(p) && p[pi+1] == ':':
					s := pi + 2
					j := s
					for j < len(p) && p[j] != ']' {
						j++
					}
					if j >= len(p) {
						return wmAbortAll
					}
					if j-s-1 < 0 || p[j-1] != ':' {
						// no ":]": a plain '['
						pi = s - 2
						pch = '['
						if tch == pch {
							matched = true
						}
						break
					}
					pi = j
					m, ok := charClass(p[s:j-1], tch)
					if !ok {
						return wmAbortAll
					}
					if m {
						matched = true
					}
					pch = 0
				default:
					if tch == pch {
						matched = true
					}
				}
				prev = pch
				pi++
				if pi >= len(p) {
					return wmAbortAll
				}
				pch = p[pi]
				if pch == ']' {
					break
				}
			}
			if matched == negated || (pathname && tch == '/') {
				return wmNoMatch
			}
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

func isGlobSpecial(c byte) bool { return c == '*' || c == '?' || c == '[' || c == '\\' }

// charClass is [:name:] of c; ok false for an unknown name.
func charClass(name string, c byte) (m, ok bool) {
	lower := c >= 'a' && c <= 'z'
	upper := c >= 'A' && c <= 'Z'
	digit := c >= '0' && c <= '9'
	switch name {
	case "alnum":
		return lower || upper || digit, true
	case "alpha":
		return lower || upper, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < 0x20 || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return c > 0x20 && c < 0x7f, true
	case "lower":
		return lower, true
	case "print":
		return c >= 0x20 && c < 0x7f, true
	case "punct":
		return c > 0x20 && c < 0x7f && !lower && !upper && !digit, true
	case "space":
		return c == ' ' || (c >= '\t' && c <= '\r'), true
	case "upper":
		return upper, true
	case "xdigit":
		return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}
