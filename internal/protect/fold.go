package protect

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fold returns name as a case-insensitive file system compares it, for the
// names the table holds: ASCII letters lowered, and a letter that such a
// file system takes for an ASCII one (ſ for s, the Kelvin sign for k: ext4's
// and f2fs' casefold, APFS, NTFS) given as that letter. Where a directory
// folds case (ext4 or f2fs with +F, vfat, exfat, a Windows drive under WSL,
// macOS's default APFS, NTFS) .VSCODE/tasks.json is the .vscode/tasks.json an
// editor opens, and a table compared byte for byte would not see it. Names
// are folded always, wherever the table is compared, rather than where a
// directory is found to fold: which ones do is the file system's to say, per
// directory, and a name that differs from a protected one in case alone is
// no project's ordinary file.
func Fold(name string) string {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return fold(name)
		}
	}
	return name
}

func fold(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range name {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// foldRune is r's ASCII letter, lowered, where r's case orbit holds one;
// else r, unchanged (no table name holds another letter).
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		return unicode.ToLower(r)
	}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf {
			return unicode.ToLower(f)
		}
	}
	return r
}
