package analysis

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

var numericSpecials = map[string]bool{
	"RANDOM": true, "SRANDOM": true, "SECONDS": true, "LINENO": true, "BASHPID": true,
	"PPID": true, "UID": true, "EUID": true, "EPOCHSECONDS": true, "OPTIND": true,
	"#": true, "?": true, "$": true, "!": true,
}

func (w *walker) test(x syntax.TestExpr) {
	switch x := x.(type) {
	case *syntax.Word:
		w.word(x)
	case *syntax.UnaryTest:
		w.test(x.X)
	case *syntax.ParenTest:
		w.test(x.X)
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			// [[ a -eq b ]] evaluates both sides as arithmetic.
			for _, side := range []syntax.TestExpr{x.X, x.Y} {
				if wd, ok := side.(*syntax.Word); ok {
					w.arith(wd)
				} else {
					w.test(side)
				}
			}
			return
		}
		w.test(x.X)
		w.test(x.Y)
	}
}

// arith walks an arithmetic expression. A variable whose value is not a known
// number is evaluated as an expression itself, so x='a[$(cmd)]'; $((x)) runs cmd.
func (w *walker) arith(x syntax.ArithmExpr) {
	switch x := x.(type) {
	case *syntax.Word:
		if lit := x.Lit(); lit != "" {
			if isName(lit) {
				w.arithVar(x, lit)
			}
			return
		}
		for _, p := range x.Parts {
			if pe, ok := p.(*syntax.ParamExp); ok && pe.Param != nil && !pe.Length {
				if pe.Index != nil {
					w.arith(pe.Index)
				}
				w.arithVar(x, pe.Param.Value)
			}
		}
		w.word(x)
	case *syntax.BinaryArithm:
		if isAssign(x.Op) {
			w.arith(x.Y)
			if wd, ok := x.X.(*syntax.Word); ok {
				if name := wd.Lit(); name != "" {
					w.setVar(name, varVal{numeric: w.numericExpr(x.Y)})
				} else {
					w.arith(x.X)
				}
			}
			return
		}
		w.arith(x.X)
		w.arith(x.Y)
	case *syntax.UnaryArithm:
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			if wd, ok := x.X.(*syntax.Word); ok && isName(wd.Lit()) {
				w.arithVar(wd, wd.Lit())
				w.setVar(wd.Lit(), varVal{numeric: true})
				return
			}
		}
		w.arith(x.X)
	case *syntax.ParenArithm:
		w.arith(x.X)
	}
}

// numericExpr reports whether an arithmetic expression yields a number rather
// than text that a later evaluation would run: x='a[$(cmd)]' inside $[ ] stores
// the text.
func (w *walker) numericExpr(x syntax.ArithmExpr) bool {
	wd, ok := x.(*syntax.Word)
	if !ok {
		return true
	}
	lit := wd.Lit()
	switch {
	case lit == "":
		return false
	case isName(lit):
		v, ok := w.vars[lit]
		return numericSpecials[lit] || ok && (v.numeric || v.known && isNumber(v.val))
	}
	return true
}

func (w *walker) arithVar(n syntax.Node, name string) {
	if numericSpecials[name] {
		return
	}
	if v, ok := w.vars[name]; ok && (v.numeric || v.known && isNumber(v.val)) {
		return
	}
	w.find(FindArith, n, "arithmetic on $"+name+", whose value is not a known number, evaluates it as code")
}

func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func isNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "-"), "+")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isAssign(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
		syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
		syntax.ShrAssgn, syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
		return true
	}
	return false
}
