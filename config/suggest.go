package config

import (
	"reflect"
	"slices"
	"strings"
	"sync"
)

// A knownKey is a dotted key a file may contain; table says it is a table.
type knownKey struct {
	key   string
	table bool
}

// knownKeys lists every dotted key a file may contain, read from fileConfig's tags so it
// cannot drift from what the decoder accepts. Read when a key is unknown, not at every start.
var knownKeys = sync.OnceValue(func() []knownKey {
	var keys []knownKey
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			isTable := f.Type.Kind() == reflect.Struct
			keys = append(keys, knownKey{prefix + name, isTable})
			if isTable {
				walk(prefix+name+".", f.Type)
			}
		}
	}
	walk("", reflect.TypeFor[fileConfig]())
	return keys
})

// suggest returns the known keys an unknown one was likely meant to be, as the
// error's "did you mean …?" says them, or "" if none is close. Best first: a
// one-letter typo of a key of the same table ("policy.netwrok" → "network");
// the same name in another table, where a user put a key in the wrong one
// (deny at the top level → "deny" in [policy], not "env"); a two-letter typo;
// a key of the same table, then of another, that shares a word with it
// (timeout → "default_timeout" or "max_timeout" in [limits], allow_network →
// "network"). More than three equally good: none.
func suggest(key string) string {
	table, name := splitKey(key)
	name = strings.ToLower(name)
	type cand struct{ table, name string }
	var best []cand
	const none = 7 // worse than a shared word in another table
	bestScore := none
	for _, k := range knownKeys() {
		kt, kn := splitKey(k.key)
		score := none
		d := editDistance(name, kn)
		switch {
		case kt == table && d == 1:
			score = 1
		case kt != table && d == 0 && !k.table:
			score = 2
		case kt == table && d == 2: // more than two edits away is not a typo
			score = 3
		case kt == table && sharesWord(name, kn):
			score = 4
		case kt != table && sharesWord(name, kn) && !k.table:
			score = 5
		}
		switch {
		case score == none:
		case score < bestScore:
			best, bestScore = []cand{{kt, kn}}, score
		case score == bestScore:
			best = append(best, cand{kt, kn})
		}
	}
	if len(best) == 0 || len(best) > 3 {
		return ""
	}
	var b strings.Builder
	for i, c := range best {
		switch {
		case i == 0:
		case i == len(best)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		b.WriteString("\"" + c.name + "\"")
		// Where the others are in the same table, it is named once, at the end.
		if c.table != table && (i == len(best)-1 || best[i+1].table != c.table) {
			if c.table == "" {
				b.WriteString(" at the top level")
			} else {
				b.WriteString(" in [" + c.table + "]")
			}
		}
	}
	return b.String()
}

// sharesWord says whether a and b, different, have a word in common, words
// being what "_" separates (timeout and default_timeout, allow_network and
// network); words of one or two letters do not count.
func sharesWord(a, b string) bool {
	if a == b {
		return false
	}
	for _, w := range strings.Split(a, "_") {
		if len(w) > 2 && slices.Contains(strings.Split(b, "_"), w) {
			return true
		}
	}
	return false
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
