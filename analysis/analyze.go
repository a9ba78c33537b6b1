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
	f, err := parse(src)
	if err != nil {
		return nil, err
	}
	w := newWalker(src, o)
	w.stmts(f.Stmts)
	return w.res, nil
}

// parsers are reused: a new parser costs more than most parses.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

func parse(src string) (*syntax.File, error) {
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	return p.Parse(strings.NewReader(src), "")
}
