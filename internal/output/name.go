package output

import "strings"

const (
	spillIDLen   = 32 // hex digits of the random id
	spillExt     = ".log"
	maxNameLen   = 64
	fallbackName = "output"
)

// cleanName makes Options.Name safe for a file name: ASCII letters, digits, '-' and
// '_' only, so that it can never add a path element and Sweep can recognise the file.
func cleanName(name string) string {
	if name == "" {
		return fallbackName
	}
	if len(name) > maxNameLen {
		name = name[:maxNameLen]
	}
	return strings.Map(func(r rune) rune {
		if isNameByte(r) {
			return r
		}
		return '_'
	}, name)
}

func isNameByte[T rune | byte](r T) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_'
}

// isSpillName reports whether a file name is one createSpill makes:
// 32 lowercase hex digits, '.', a cleaned name, ".log".
func isSpillName(s string) bool {
	rest, ok := strings.CutSuffix(s, spillExt)
	if !ok || len(rest) < spillIDLen+2 || rest[spillIDLen] != '.' {
		return false
	}
	for i := range spillIDLen {
		if c := rest[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	name := rest[spillIDLen+1:]
	if len(name) > maxNameLen {
		return false
	}
	for i := range len(name) {
		if !isNameByte(name[i]) {
			return false
		}
	}
	return true
}
