// Package opts reads a command's arguments the way the program itself does:
// getopt_long with GNU permutation, unique prefixes of long options, bundled
// short options with attached values, --opt=value and --opt value, and "--".
//
// It is the one option parser of shellgate: the analysis records what it finds
// on each command and the policy judges that, so the two cannot disagree about
// which word is an option, an option's value or an operand.
package opts

import (
	"sort"
	"strings"
	"sync"
)

// arity says whether an option takes a value.
type arity uint8

const (
	none     arity = iota
	required       // -o FILE, -oFILE, --out FILE, --out=FILE
	optional       // attached only: -i.bak, --in-place=.bak
)

type long struct {
	name  string
	arity arity
}

// Spec is the option grammar of one program (or one git subcommand).
type Spec struct {
	g *grammar
	// InOrder: options end at the first operand (POSIX getopt, wrappers whose
	// operand is a command, git's global options, Go's flag package).
	InOrder bool
	// OneDash: Go's flag package, and tools like it: -name and --name are the
	// same long option, there is no bundling and no abbreviation.
	OneDash bool
	// Exact: long options are never abbreviated (git's global options).
	Exact bool
	// LongOnly: getopt_long_only (gdb, X programs): -name is a long option
	// as --name is, abbreviated to any unique prefix; a word after one dash
	// that names none is read as bundled short options.
	LongOnly bool
	// Final lists short options whose value ends the options: what follows is
	// the operands, whatever it looks like (python -c CMD, python -m MODULE).
	Final string
	// Chdir names the options whose value is the directory the program works
	// in (make -C, tar --directory, patch -d): what it reads and writes is
	// then there, not where it was started.
	Chdir []string
}

// grammar is a Spec's grammar as written, read into a table on first use:
// shellgate knows hundreds of programs and a check meets a few, and building
// every table at start-up cost each one-shot check or hook about a millisecond
// and 120 KB. Copies of a Spec share it.
type grammar struct {
	short string
	longs []string
	once  sync.Once
	table *table
}

// noOptions is the table of the zero Spec.
var noOptions table

// table is a grammar ready to look options up in.
type table struct {
	short [128]arity
	longs []long // sorted by name
}

// New builds a Spec. short is getopt's string ("o:" takes a value, "i::" an
// optional attached one, "v" none). Each long option is "name" (no value),
// "name=" (a value) or "name=?" (an optional value, attached with =).
//
// Every long option the program has should be listed, not only the ones with
// values: a word that is an exact name of one option and a prefix of another is
// that option, and only a full list tells which.
func New(short string, longs ...string) *Spec {
	return &Spec{g: &grammar{short: short, longs: longs}}
}

// grammar returns the Spec's table, reading it on first use.
func (s *Spec) grammar() *table {
	g := s.g
	if g == nil { // the zero Spec: no option takes a value
		return &noOptions
	}
	g.once.Do(func() { g.table = newTable(g.short, g.longs) })
	return g.table
}

func newTable(short string, longs []string) *table {
	t := &table{longs: make([]long, 0, len(longs))}
	for i := 0; i < len(short); i++ {
		ch := short[i]
		if ch >= 128 || ch == ':' {
			continue
		}
		switch {
		case strings.HasPrefix(short[i+1:], "::"):
			t.short[ch] = optional
			i += 2
		case strings.HasPrefix(short[i+1:], ":"):
			t.short[ch] = required
			i++
		}
	}
	for _, l := range longs {
		switch {
		case strings.HasSuffix(l, "=?"):
			t.longs = append(t.longs, long{strings.TrimSuffix(l, "=?"), optional})
		case strings.HasSuffix(l, "="):
			t.longs = append(t.longs, long{strings.TrimSuffix(l, "="), required})
		default:
			t.longs = append(t.longs, long{l, none})
		}
	}
	sort.Slice(t.longs, func(i, j int) bool { return t.longs[i].name < t.longs[j].name })
	return t
}

// Opt is one option found on a command line.
type Opt struct {
	// Name is the option as the program knows it: the letter of a short option
	// ("o"), or the full name of a long one ("output", not the "out" written).
	Name     string `json:"name"`
	Value    string `json:"value,omitempty"`
	HasValue bool   `json:"-"`
	// At is the index of the argument that holds the value: the option's own
	// word when the value is attached or there is none.
	At int `json:"-"`
	// Ambiguous: a long-option prefix of several options. The program refuses
	// to start; Name is what was written.
	Ambiguous bool `json:"ambiguous,omitempty"`
}

// Result is what Parse found.
type Result struct {
	Opts     []Opt
	Operands []int // indexes of the operands, in order
	// End is the index of the first argument not parsed as an option (for
	// InOrder, the first operand; len(args) when there is none).
	End int
}

// Parse reads args under s. dynamic, when not nil, reports arguments whose
// value is only known at run time: they count as operands.
func (s *Spec) Parse(args []string, dynamic func(int) bool) Result {
	var r Result
	// Sized once: this runs for every command of every line checked.
	dashes := 0
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' {
			dashes += len(a) - 1
		}
	}
	if dashes > 0 {
		r.Opts = make([]Opt, 0, min(dashes, len(args)*2))
	}
	if dashes < len(args) {
		r.Operands = make([]int, 0, len(args))
	}
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			if !s.InOrder {
				for j := i + 1; j < len(args); j++ {
					r.Operands = append(r.Operands, j)
				}
				r.End = len(args)
				return r
			}
			i++
			break
		}
		if len(a) < 2 || a[0] != '-' || dynamic != nil && dynamic(i) {
			if s.InOrder {
				break
			}
			r.Operands = append(r.Operands, i)
			continue
		}
		if s.OneDash || strings.HasPrefix(a, "--") || s.LongOnly && s.isLong(a[1:]) {
			i = s.parseLong(&r, args, i)
		} else {
			i = s.parseShort(&r, args, i)
			if s.final(r.Opts) {
				i++
				break
			}
		}
	}
	r.End = min(i, len(args))
	if s.InOrder || s.final(r.Opts) {
		for j := r.End; j < len(args); j++ {
			r.Operands = append(r.Operands, j)
		}
	}
	return r
}

// final reports whether the last option found is one of s.Final, with its value.
func (s *Spec) final(found []Opt) bool {
	if s.Final == "" || len(found) == 0 {
		return false
	}
	o := found[len(found)-1]
	return o.HasValue && len(o.Name) == 1 && strings.Contains(s.Final, o.Name)
}

// parseLong reads the long option at args[i] and returns the index of the last
// argument it used.
func (s *Spec) parseLong(r *Result, args []string, i int) int {
	word := strings.TrimLeft(args[i], "-")
	name, val, hasVal := strings.Cut(word, "=")
	l, ok, ambiguous := s.lookup(name)
	switch {
	case ambiguous:
		r.Opts = append(r.Opts, Opt{Name: name, Value: val, HasValue: hasVal, At: i, Ambiguous: true})
		return i
	case !ok:
		// Not an option of the program as far as the spec knows; keep what
		// was written so that a rule can still see it.
		r.Opts = append(r.Opts, Opt{Name: name, Value: val, HasValue: hasVal, At: i})
		return i
	}
	o := Opt{Name: l.name, Value: val, HasValue: hasVal, At: i}
	if !hasVal && l.arity == required && i+1 < len(args) {
		i++
		o.Value, o.HasValue, o.At = args[i], true, i
	}
	r.Opts = append(r.Opts, o)
	return i
}

// isLong reports whether getopt_long_only reads word (after its one dash)
// as a long option: it names one, or is a prefix of one or more (an
// ambiguous prefix is an error to it, not short options).
func (s *Spec) isLong(word string) bool {
	name, _, _ := strings.Cut(word, "=")
	_, ok, ambiguous := s.lookup(name)
	return ok || ambiguous
}

// lookup finds a long option by its exact name or, as getopt_long does, by a
// prefix of exactly one name.
func (s *Spec) lookup(name string) (l long, ok, ambiguous bool) {
	longs := s.grammar().longs
	k := sort.Search(len(longs), func(j int) bool { return longs[j].name >= name })
	if k < len(longs) && longs[k].name == name {
		return longs[k], true, false
	}
	if s.OneDash || s.Exact || name == "" {
		return long{}, false, false
	}
	n := 0
	for j := k; j < len(longs) && strings.HasPrefix(longs[j].name, name); j++ {
		if n == 0 {
			l = longs[j]
		}
		n++
	}
	return l, n == 1, n > 1
}

// parseShort reads a bundle of short options at args[i] and returns the index
// of the last argument it used.
func (s *Spec) parseShort(r *Result, args []string, i int) int {
	a := args[i]
	short := &s.grammar().short
	for j := 1; j < len(a); j++ {
		ch := a[j]
		var ar arity
		if ch < 128 {
			ar = short[ch]
		}
		switch ar {
		case none:
			r.Opts = append(r.Opts, Opt{Name: string(ch), At: i})
			continue
		case optional:
			o := Opt{Name: string(ch), At: i}
			if j+1 < len(a) {
				o.Value, o.HasValue = a[j+1:], true
			}
			r.Opts = append(r.Opts, o)
			return i
		}
		o := Opt{Name: string(ch), At: i}
		switch {
		case j+1 < len(a):
			o.Value, o.HasValue = a[j+1:], true
		case i+1 < len(args):
			i++
			o.Value, o.HasValue, o.At = args[i], true, i
		}
		r.Opts = append(r.Opts, o)
		return i
	}
	return i
}

// matches reports whether o is the option n, or a prefix that getopt refused
// as ambiguous but that could stand for n.
func (o *Opt) matches(n string) bool {
	return o.Name == n || o.Ambiguous && strings.HasPrefix(n, o.Name)
}

// Has reports whether any of names was given.
func (r *Result) Has(names ...string) bool {
	for k := range r.Opts {
		for _, n := range names {
			if r.Opts[k].matches(n) {
				return true
			}
		}
	}
	return false
}

// Values returns the options among names that were given with a value.
func (r *Result) Values(names ...string) []Opt {
	var out []Opt
	for k := range r.Opts {
		if !r.Opts[k].HasValue {
			continue
		}
		for _, n := range names {
			if r.Opts[k].matches(n) {
				out = append(out, r.Opts[k])
				break
			}
		}
	}
	return out
}
