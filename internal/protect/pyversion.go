package protect

import (
	"regexp"
	"strings"
	"sync"
)

// pythonVersion is one request uv takes for a version before it looks for a
// file (uv's PythonRequest::parse): an implementation, a version or a
// specifier list, or both ("3.12", "3.13t", ">=3.11,<3.13", "pypy@3.10",
// "cpython3.12", "3.14+freethreaded"). What is not one uv tries as a path
// (a directory, a file) where it runs, then as a program on PATH.
var pythonVersion = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:(?:cpython|cp|pypy|pp|graalpy|gp|pyodide)@?)?(?:(?:===|==|!=|~=|<=|>=|<|>)?\s*\d+(?:\.(?:\d+|\*)){0,2}(?:(?:a|b|rc)\d+)?[td]?(?:\+[a-z]+)?(?:\s*,\s*(?:===|==|!=|~=|<=|>=|<|>)?\s*\d+(?:\.(?:\d+|\*)){0,2}(?:(?:a|b|rc)\d+)?[td]?(?:\+[a-z]+)?)*)?$`)
}) // compiled on first use: at start it cost every shellgate 45 KB

// PythonVersions says whether a .python-version holds versions alone: each
// line empty, a comment, or a request uv reads as a version or an
// implementation (what `uv init` and `uv python pin 3.12` write, and
// pyenv's version numbers). A line uv would read as a path, or as a name
// it looks up as a file where it runs, is no version.
func PythonVersions(data []byte) bool {
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !pythonVersion().MatchString(strings.ToLower(line)) {
			return false
		}
	}
	return true
}
