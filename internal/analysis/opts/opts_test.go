package opts

import (
	"reflect"
	"strings"
	"testing"
)

// sortLike is a GNU tool with short and long options, values and none.
var sortLike = New("o:t:i::rn", "output=", "output-format=", "in-place=?", "reverse", "numeric-sort", "target-directory=", "targets")

// pythonLike stops at its first operand, or after the value of -c or -m.
var pythonLike = func() *Spec {
	s := New("c:Im:W:", "help")
	s.InOrder, s.Exact, s.Final = true, true, "cm"
	return s
}()

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		args     string
		spec     *Spec
		opts     string // name=value, space separated; name alone when no value
		operands []int
	}{
		{"-o out in", sortLike, "o=out", []int{2}},
		{"-oout in", sortLike, "o=out", []int{1}},
		{"-rno out in", sortLike, "r n o=out", []int{2}},
		{"-rnoout in", sortLike, "r n o=out", []int{1}},
		{"--output out in", sortLike, "output=out", []int{2}},
		{"--output=out in", sortLike, "output=out", []int{1}},
		// Unique prefixes are the option; shared ones are ambiguous.
		{"--outp=x in", sortLike, "?outp=x", []int{1}},
		{"--output-f x in", sortLike, "output-format=x", []int{2}},
		{"--rev --num in", sortLike, "reverse numeric-sort", []int{2}},
		{"--target-d=/x in", sortLike, "target-directory=/x", []int{1}},
		{"--targ /x in", sortLike, "?targ", []int{1, 2}},
		// An exact name wins over a longer one it prefixes.
		{"--targets in", sortLike, "targets", []int{1}},
		// Optional values are attached only.
		{"-i in", sortLike, "i", []int{1}},
		{"-i.bak in", sortLike, "i=.bak", []int{1}},
		{"--in-pl in", sortLike, "in-place", []int{1}},
		{"--in-pl=.b in", sortLike, "in-place=.b", []int{1}},
		// GNU permutation, and -- ends options.
		{"in -r -- -o x", sortLike, "r", []int{0, 3, 4}},
		{"- -r", sortLike, "r", []int{0}},
		// A Final option's value ends the options (python -m MOD, -c CMD).
		{"-m venv --clear /x", pythonLike, "m=venv", []int{2, 3}},
		{"-Imvenv -x", pythonLike, "I m=venv", []int{1}},
		{"-I -c code -m x", pythonLike, "I c=code", []int{3, 4}},
		{"-W ignore script.py -m x", pythonLike, "W=ignore", []int{2, 3, 4}},
		{"-m", pythonLike, "m", nil},
	} {
		r := tt.spec.Parse(strings.Fields(tt.args), nil)
		var got []string
		for _, o := range r.Opts {
			n := o.Name
			if o.Ambiguous {
				n = "?" + n
			}
			if o.HasValue {
				n += "=" + o.Value
			}
			got = append(got, n)
		}
		if strings.Join(got, " ") != tt.opts || !reflect.DeepEqual(r.Operands, tt.operands) && len(r.Operands)+len(tt.operands) > 0 {
			t.Errorf("%q: got opts %q operands %v; want %q %v", tt.args, strings.Join(got, " "), r.Operands, tt.opts, tt.operands)
		}
	}
}

func TestParseInOrder(t *testing.T) {
	env := New("C:iu:S:", "chdir=", "ignore-environment", "unset=", "split-string=")
	env.InOrder = true
	for _, tt := range []struct {
		args string
		end  int
		opts string
	}{
		{"-i rm -rf x", 1, "i"},
		{"--ch=/x rm", 1, "chdir=/x"},
		{"--ch /x rm -f", 2, "chdir=/x"},
		{"-iC /x -- rm", 3, "i C=/x"},
		{"-iC/x rm", 1, "i C=/x"},
		{"A=1 rm -i", 0, ""},
	} {
		r := env.Parse(strings.Fields(tt.args), nil)
		var got []string
		for _, o := range r.Opts {
			if o.HasValue {
				got = append(got, o.Name+"="+o.Value)
			} else {
				got = append(got, o.Name)
			}
		}
		if r.End != tt.end || strings.Join(got, " ") != tt.opts {
			t.Errorf("%q: got end %d opts %q; want %d %q", tt.args, r.End, strings.Join(got, " "), tt.end, tt.opts)
		}
	}
}

func TestParseOneDashExact(t *testing.T) {
	g := New("", "o=", "exec=", "v")
	g.OneDash, g.Exact = true, true
	r := g.Parse([]string{"-o", "x", "--exec=y", "-ex", "-v", "./..."}, nil)
	if len(r.Values("o")) != 1 || r.Values("exec")[0].Value != "y" || r.Has("e") || !r.Has("v") || !reflect.DeepEqual(r.Operands, []int{5}) {
		t.Errorf("go flags: %+v", r)
	}
}

// getopt_long_only (gdb): one dash or two, a unique prefix names a long option;
// a word that names none is short options.
func TestParseLongOnly(t *testing.T) {
	g := New("x:e:q", "ex=", "eval-command=", "iex=", "batch", "quiet", "x=")
	g.LongOnly = true
	tests := []struct {
		args []string
		name string
		val  string
	}{
		{[]string{"-ex", "a"}, "ex", "a"},
		{[]string{"--ex=a"}, "ex", "a"},
		{[]string{"-eval-command=a"}, "eval-command", "a"},
		{[]string{"-eval", "a"}, "eval-command", "a"},
		{[]string{"-batch", "-iex", "a"}, "iex", "a"},
		{[]string{"-x", "a"}, "x", "a"},
		{[]string{"-qe", "a"}, "e", "a"}, // no long option starts with qe
	}
	for _, tt := range tests {
		r := g.Parse(tt.args, nil)
		if v := r.Values(tt.name); len(v) != 1 || v[0].Value != tt.val {
			t.Errorf("%q: %s = %+v, want %q (%+v)", tt.args, tt.name, v, tt.val, r.Opts)
		}
	}
}

func TestParseDynamicIsOperand(t *testing.T) {
	r := sortLike.Parse([]string{"$x", "-r"}, func(i int) bool { return i == 0 })
	if !reflect.DeepEqual(r.Operands, []int{0}) || !r.Has("r") {
		t.Errorf("%+v", r)
	}
}

// FuzzParse: no input panics; every index is in range, each argument is at
// most one of operand or option value, and operands come in order.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"-o out in", "--out=x -- -r", "--targ /x", "-iC dir", "-ne's|x|e' f", "--in-pl", "-", "--", "---x"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, line string, inOrder bool) {
		args := strings.Split(line, " ")
		s := *sortLike
		s.InOrder = inOrder
		r := s.Parse(args, func(i int) bool { return strings.HasPrefix(args[i], "$") })
		used := map[int]bool{}
		last := -1
		for _, i := range r.Operands {
			if i < 0 || i >= len(args) || i <= last {
				t.Fatalf("%q: operands %v", line, r.Operands)
			}
			last = i
			used[i] = true
		}
		for _, o := range r.Opts {
			if o.At < 0 || o.At >= len(args) {
				t.Fatalf("%q: option %+v out of range", line, o)
			}
			if used[o.At] {
				t.Fatalf("%q: argument %d is both an operand and %+v", line, o.At, o)
			}
			if o.HasValue && !strings.Contains(args[o.At], o.Value) {
				t.Fatalf("%q: value %q not in its argument %q", line, o.Value, args[o.At])
			}
		}
		if r.End < 0 || r.End > len(args) {
			t.Fatalf("%q: end %d", line, r.End)
		}
	})
}
