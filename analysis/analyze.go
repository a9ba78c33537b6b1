package analysis

import (
	"fmt"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// MaxInput is the longest command line Analyze accepts.
const MaxInput = 1 << 20

// Analyze parses src as bash and returns every simple command it would run.
// The error is a parse error (or an input too large to analyse); callers must
// treat it as a refusal, never as "nothing to run".
func Analyze(src string, o Options) (*Analysis, error) {
	if len(src) > MaxInput {
		return nil, fmt.Errorf("command is %d bytes, more than the %d analysed", len(src), MaxInput)
	}
	if i := strings.IndexByte(src, 0); i >= 0 {
		// bash receives its command as a C string: it would stop here.
		return nil, fmt.Errorf("command contains a NUL byte at offset %d", i)
	}
	f, err := parse(src)
	if err != nil {
		return nil, err
	}
	w := newWalker(src, o)
	w.stmts(f.Stmts)
	for _, t := range w.traps {
		w.nestedVia(t.text, "trap", t.at, t.via, false, nil)
	}
	return w.res, nil
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
