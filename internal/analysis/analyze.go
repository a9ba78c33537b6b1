package analysis

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/shellgate/shellgate/internal/realpath"
)

// MaxInput is the longest command line Analyze accepts.
const MaxInput = 1 << 20

// MaxNesting bounds how deeply parentheses and braces nest in a command line:
// the parser recurses once per level, and a line of nothing but "$(" would
// take it minutes.
const MaxNesting = 256

// DefaultBudget is the analysis time allowed when Options.Budget is zero.
const DefaultBudget = 2 * time.Second

// ErrCost reports a command line too large, too deeply nested or too slow to
// analyse: refused, never guessed.
var ErrCost = errors.New("command too costly to analyse")

// NotUTF8 reports a command line that is not UTF-8 text and holds a rune of
// those that stand for such bytes while it is analysed (mapRaw): the two
// could not be told apart. Offset counts bytes from 0; Line and Col count
// from 1, Col in bytes as the parser's positions do.
type NotUTF8 struct {
	Byte              byte
	Offset, Line, Col int
}

func (e *NotUTF8) Error() string {
	return fmt.Sprintf("byte 0x%02x at offset %d (line %d, column %d) is not UTF-8", e.Byte, e.Offset, e.Line, e.Col)
}

// notUTF8 finds the first byte of src that is not UTF-8, or returns nil.
func notUTF8(src string) error {
	if utf8.ValidString(src) {
		return nil
	}
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError && n == 1 {
			line := strings.Count(src[:i], "\n") + 1
			return &NotUTF8{Byte: src[i], Offset: i, Line: line, Col: i - strings.LastIndexByte(src[:i], '\n')}
		}
		i += n
	}
	return nil
}

// Analyze parses src as bash and returns every simple command it would run.
// The error is a parse error (or an input too large to analyse); callers must
// treat it as a refusal, never as "nothing to run".
func Analyze(src string, o Options) (*Analysis, error) {
	if len(src) > MaxInput {
		return nil, fmt.Errorf("%w: it is %d bytes, more than the %d analysed", ErrCost, len(src), MaxInput)
	}
	if d := nesting(src); d > MaxNesting {
		return nil, fmt.Errorf("%w: parentheses or braces nest %d levels deep, more than the %d analysed", ErrCost, d, MaxNesting)
	}
	if i := strings.IndexByte(src, 0); i >= 0 {
		// bash receives its command as a C string: it would stop here.
		return nil, fmt.Errorf("command contains a NUL byte at offset %d", i)
	}
	raw := src
	if !utf8.ValidString(src) {
		m, ok := mapRaw(src)
		if !ok {
			return nil, notUTF8(src)
		}
		src = m
		resolve := o.Resolve
		if resolve == nil {
			resolve = realpath.Resolve
		}
		o.Resolve = func(p string) string { return mapAgain(resolve(unmapBytes(p))) }
	}
	f, err := parse(src)
	if err != nil {
		return nil, err
	}
	w := newWalker(src, o)
	budget := o.Budget
	if budget == 0 {
		budget = DefaultBudget
	}
	elapsed, stop := startClock()
	defer stop()
	w.overSpent = func() bool { return elapsed() > budget }
	w.stmts(f.Stmts)
	for _, t := range w.traps {
		w.nestedVia(t.text, "trap", t.at, t.via, false, nil)
	}
	w.supersede()
	if w.costly != "" {
		return nil, fmt.Errorf("%w: %s", ErrCost, w.costly)
	}
	if w.overBudget {
		return nil, fmt.Errorf("%w: it took longer than the %v allowed", ErrCost, budget)
	}
	if src != raw {
		unmapResult(w.res, src)
	}
	return w.res, nil
}

// wallClock measures the time that passes since it was called.
func wallClock() (elapsed func() time.Duration, stop func()) {
	start := time.Now()
	return func() time.Duration { return time.Since(start) }, func() {}
}

// nesting is the deepest nesting of ( and { outside single quotes: an upper
// bound on how deep the parser will recurse for them.
func nesting(src string) int {
	depth, most := 0, 0
	quoted := false
	for i := 0; i < len(src); i++ {
		switch ch := src[i]; {
		case ch == '\\' && !quoted:
			i++
		case ch == '\'':
			quoted = !quoted
		case quoted:
		case ch == '(' || ch == '{':
			depth++
			most = max(most, depth)
		case ch == ')' || ch == '}':
			depth = max(depth-1, 0)
		}
	}
	return most
}

// parsers are reused: a new parser costs more than most parses.
var parsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true))
}}

func parse(src string) (*syntax.File, error) {
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	f, err := p.Parse(strings.NewReader(src), "")
	if err == nil && strings.IndexByte(src, '#') >= 0 {
		err = checkComments(f, src)
	}
	return f, err
}

// checkComments refuses a comment that bash would not see. Bash starts a
// comment only at the beginning of a word; the parser also takes a # glued to
// a quote inside $(…) or `…` for one, so in `$(x'y'#; rm -rf /` + "\n)" it would
// hide a command that bash runs.
func checkComments(f *syntax.File, src string) error {
	var bad *syntax.Comment
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.Comment); ok && bad == nil {
			if off := int(c.Hash.Offset()); off > 0 && off <= len(src) && !strings.ContainsRune(" \t\n;&|(<>", rune(src[off-1])) {
				bad = c
			}
		}
		return bad == nil
	})
	if bad != nil {
		return syntax.ParseError{Pos: bad.Hash, Text: "a # glued to the word before it is not a comment to bash; put a space before it or quote it"}
	}
	return nil
}
