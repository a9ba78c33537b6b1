package checkpoint

import "testing"

// wildmatch answers as git's wildmatch() does (cases from git's own
// t3070-wildmatch): with pathname (.gitignore patterns with a slash), a
// star stops at a slash and "**" alone between slashes spans directories.
func TestWildmatch(t *testing.T) {
	for _, c := range []struct {
		pattern, text string
		pathname      bool
		want          bool
	}{
		{"foo", "foo", true, true},
		{"bar", "foo", true, false},
		{"*", "foo", true, true},
		{"f*", "foo", true, true},
		{"*f", "foo", true, false},
		{"*foo*", "foo", true, true},
		{"???", "foo", true, true},
		{"??", "foo", true, false},
		{"*[al]?", "ball", true, true},
		{"[ten]", "ten", true, false},
		{"foo/*", "foo/bar/baz", true, false},
		{"foo/**", "foo/bar/baz", true, true},
		{"**/foo", "foo", true, true},
		{"**/foo", "a/b/foo", true, true},
		{"a/**/b", "a/b", true, true},
		{"a/**/b", "a/x/y/b", true, true},
		{"a**/b", "ax/y/b", true, false}, // "**" not alone: a star
		{"*.c", "a/b.c", true, false},
		{"*.c", "a/b.c", false, true},
		{"a?c", "a/c", true, false},
		{"a?c", "a/c", false, true},
		{"[[:digit:]]x", "5x", true, true},
		{"[[:alpha:][:digit:]]", "q", true, true},
		{"[[:punct:]]", "a", true, false},
		{"[[:xdigit:]]", "F", true, true},
		{"[[:bogus:]]", "a", true, false},
		{"[a-c]x", "bx", true, true},
		{"[!a-c]x", "bx", true, false},
		{"[^a-c]x", "dx", true, true},
		{"[]]", "]", true, true},
		{"[a-]", "-", true, true},
		{"[\\]]", "]", true, true},
		{"\\*", "*", true, true},
		{"\\*", "a", true, false},
		{"[a", "a", true, false}, // never closed
		{"[/]", "/", true, false},
		{"*/", "dir/", true, true},
	} {
		if got := wildmatch(c.pattern, c.text, c.pathname); got != c.want {
			t.Errorf("wildmatch(%q, %q, pathname %v) = %v, want %v", c.pattern, c.text, c.pathname, got, c.want)
		}
	}
}
