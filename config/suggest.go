package config

import (
	"reflect"
	"strings"
	"sync"
)

// knownKeys lists every dotted key a file may contain, read from fileConfig's tags so it
// cannot drift from what the decoder accepts. Read when a key is unknown, not at every start.
var knownKeys = sync.OnceValue(func() []string {
	var keys []string
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			keys = append(keys, prefix+name)
			if f.Type.Kind() == reflect.Struct {
				walk(prefix+name+".", f.Type)
			}
		}
	}
	walk("", reflect.TypeFor[fileConfig]())
	return keys
})

// suggest returns a known key close to an unknown one ("policy.netwrok" → "network"),
// comparing within the same table, or "" if none is close.
func suggest(key string) string {
	table, name := splitKey(key)
	best, bestDist := "", 3 // more than two edits away is not a typo
	for _, k := range knownKeys() {
		kt, kn := splitKey(k)
		if kt != table {
			continue
		}
		if d := editDistance(strings.ToLower(name), kn); d < bestDist {
			best, bestDist = kn, d
		}
	}
	if best == "" {
		return ""
	}
	return "\"" + best + "\""
}

// editDistance is the Damerau–Levenshtein distance (with adjacent swaps), enough to
// catch "netwrok" and "dny".
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range rb {
		d[0][j+1] = j + 1
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
