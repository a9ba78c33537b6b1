package analysis

import (
	"reflect"
	"strings"
	"unicode/utf8"
)

// Bash takes any byte; the parser reads only UTF-8. A line that is not UTF-8
// is analysed with each byte that is not written as a rune of its own (U+F780
// + the byte's low seven bits, a private-use block no text needs), and every
// string of the result is written back with the bytes: what is judged, and
// what runs, is what was written. A line that holds one of those runes
// already is refused (NotUTF8): the two could not be told apart.
const rawBase = 0xF780

// mapRaw returns src with each byte that is not UTF-8 as its rune, and
// whether it could (false: src holds such a rune itself).
func mapRaw(src string) (string, bool) {
	var b strings.Builder
	b.Grow(len(src) + 16)
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRuneInString(src[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(rawBase + rune(src[i]&0x7f))
		case r >= rawBase && r < rawBase+0x80:
			return "", false
		default:
			b.WriteString(src[i : i+n])
		}
		i += n
	}
	return b.String(), true
}

// mapAgain maps a string that comes from outside the line (a link's target
// the resolver read) as the line was mapped; one holding a rune of the block
// itself is left as it is.
func mapAgain(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	if m, ok := mapRaw(s); ok {
		return m
	}
	return s
}

func hasRawRune(s string) bool {
	for _, r := range s {
		if r >= rawBase && r < rawBase+0x80 {
			return true
		}
	}
	return false
}

// unmapResult writes the bytes back into every string of a (reached by
// reflection, so that no field is forgotten), and moves each position's
// column back by the two bytes each rune before it on its line added.
func unmapResult(a *Analysis, mapped string) {
	lines := strings.Split(mapped, "\n")
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			if v.CanSet() {
				if s := v.String(); hasRawRune(s) {
					v.SetString(unmapBytes(s))
				}
			}
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		case reflect.Struct:
			if p, ok := v.Addr().Interface().(*Pos); ok {
				if p.Line >= 1 && p.Line <= len(lines) {
					line := lines[p.Line-1]
					n := 0
					for i, r := range line {
						if i >= p.Col-1 {
							break
						}
						if r >= rawBase && r < rawBase+0x80 {
							n++
						}
					}
					p.Col -= 2 * n
				}
				return
			}
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		}
	}
	walk(reflect.ValueOf(a).Elem())
}

// unmapBytes is unmapRaw for a string that may hold raw bytes already (from
// the resolver, the environment, the root's own name): those are kept.
func unmapBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r >= rawBase && r < rawBase+0x80 {
			b.WriteByte(byte(r-rawBase) | 0x80)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
