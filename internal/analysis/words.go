package analysis

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// word is a shell word after the expansions shellgate can do statically.
type word struct {
	val   string
	flags ArgFlag
}

func (w word) static() bool { return w.flags&(ArgDynamic|ArgGlob) == 0 }

// argSplit marks a word with an unquoted expansion whose value holds blanks:
// bash splits it into several words.
const argSplit ArgFlag = 1 << 7

// words expands a command's words, brace expansion included, and walks every
// substitution inside them (their commands run before the command itself).
// Like bash, it splits unquoted expansions on blanks and drops words that
// expand to nothing: in `x=; $x rm -rf /` the command is rm.
func (w *walker) words(ws []*syntax.Word) []word {
	out := make([]word, 0, len(ws))
	add := func(v word) {
		switch {
		case v.flags&argSplit != 0 && v.flags&ArgQuoted == 0:
			for _, f := range strings.Fields(v.val) {
				out = append(out, word{val: f, flags: v.flags &^ argSplit})
			}
		case v.flags&argSplit != 0:
			// Quoted and split parts mixed: which words result is not
			// worth guessing.
			out = append(out, word{val: v.val, flags: v.flags&^argSplit | ArgDynamic})
		case v.val == "" && v.flags&(ArgQuoted|ArgDynamic) == 0:
			// An unquoted word that expands to nothing is removed.
		default:
			out = append(out, v)
		}
	}
	for _, wd := range ws {
		if hasBrace(wd) {
			for _, e := range expandBraces(wd) {
				add(w.word(e))
			}
			continue
		}
		add(w.word(wd))
	}
	return out
}

func hasBrace(wd *syntax.Word) bool {
	for _, p := range wd.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// maxBraces caps brace expansion; beyond it the word stays one dynamic word.
const maxBraces = 64

// expandBraces does bash's brace expansion: {a,b}c is two words, ac and bc.
func expandBraces(wd *syntax.Word) []*syntax.Word {
	split := &syntax.Word{Parts: append([]syntax.WordPart(nil), wd.Parts...)}
	if !syntax.SplitBraces(split) {
		return []*syntax.Word{wd}
	}
	alts, ok := braceParts(split.Parts)
	if !ok {
		return []*syntax.Word{wd}
	}
	res := make([]*syntax.Word, 0, len(alts))
	for _, parts := range alts {
		if len(parts) == 0 {
			parts = []syntax.WordPart{&syntax.Lit{}}
		}
		res = append(res, &syntax.Word{Parts: parts})
	}
	return res
}

// braceParts expands the brace expressions among parts, nested ones included.
func braceParts(parts []syntax.WordPart) ([][]syntax.WordPart, bool) {
	outs := [][]syntax.WordPart{nil}
	for _, p := range parts {
		be, ok := p.(*syntax.BraceExp)
		if !ok {
			for i := range outs {
				outs[i] = append(outs[i], p)
			}
			continue
		}
		if be.Sequence {
			// {1..9}: numbers or letters, never names or paths that matter.
			for i := range outs {
				outs[i] = append(outs[i], &syntax.Lit{Value: "{" + wordLit(be.Elems[0]) + ".." + wordLit(be.Elems[len(be.Elems)-1]) + "}"})
			}
			continue
		}
		var next [][]syntax.WordPart
		for _, e := range be.Elems {
			subs, ok := braceParts(e.Parts)
			if !ok {
				return nil, false
			}
			for _, o := range outs {
				for _, sub := range subs {
					next = append(next, append(append([]syntax.WordPart(nil), o...), sub...))
				}
			}
			if len(next) > maxBraces {
				return nil, false
			}
		}
		outs = next
	}
	return outs, true
}

func wordLit(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
		}
	}
	return b.String()
}

// word expands one word.
func (w *walker) word(wd *syntax.Word) word { return w.wordFrom(wd, assignLike(wd)) }

// assignValue expands the value of an assignment: bash expands a tilde at
// its start and after each colon (PATH=~/bin:~/go/bin).
func (w *walker) assignValue(wd *syntax.Word) word { return w.wordFrom(wd, 0) }

// assignLike returns where the value starts in a word that has an
// assignment's form, NAME=VALUE or NAME+=VALUE, or -1. Bash expands a
// tilde there and after each colon in an argument of that form too: in
// `dd of=~/.bashrc` or `make DESTDIR=~` the ~ is the home directory.
func assignLike(wd *syntax.Word) int {
	if len(wd.Parts) == 0 {
		return -1
	}
	l, ok := wd.Parts[0].(*syntax.Lit)
	if !ok {
		return -1
	}
	s := l.Value
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || i > 0 && s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i == 0 || i == len(s) {
		return -1
	}
	if s[i] == '+' && i+1 < len(s) {
		i++
	}
	if s[i] != '=' {
		return -1
	}
	return i + 1
}

// wordFrom expands one word whose tildes are expanded as bash does in an
// assignment's value from index from of its first literal (-1: only a
// leading tilde).
func (w *walker) wordFrom(wd *syntax.Word, from int) word {
	var b strings.Builder
	var flags ArgFlag
	for i, p := range wd.Parts {
		if i == 0 {
			if l, ok := p.(*syntax.Lit); ok && from >= 0 {
				lit, f := w.assignTildes(l.Value, from, len(wd.Parts) == 1)
				flags |= f
				b.WriteString(unescape(lit, &flags))
				continue
			}
			if l, ok := p.(*syntax.Lit); ok && strings.HasPrefix(l.Value, "~") {
				rest, f := w.tilde(l.Value)
				flags |= f
				b.WriteString(unescape(rest, &flags))
				continue
			}
		}
		flags |= w.part(&b, p, false)
	}
	if flags&ArgDynamic != 0 {
		return word{val: w.text(wd), flags: flags}
	}
	return word{val: b.String(), flags: flags}
}

// tilde expands a leading ~, ~+ or ~- and returns what follows it.
func (w *walker) tilde(lit string) (string, ArgFlag) {
	end := strings.IndexByte(lit, '/')
	if end < 0 {
		end = len(lit)
	}
	var val string
	var ok bool
	switch lit[1:end] {
	case "":
		val, ok = w.lookup("HOME")
	case "+":
		val, ok = w.lookup("PWD")
	case "-":
		val, ok = w.lookup("OLDPWD")
	default:
		return lit, ArgDynamic // ~user
	}
	if !ok {
		return lit, ArgDynamic
	}
	return escapeLit(val) + lit[end:], 0
}

// assignTildes expands the tildes of lit, the first literal of a word, that
// bash expands in an assignment's value starting at from: the value's first
// character and each one after an unquoted colon. A tilde prefix runs to the
// next slash or colon; one that runs into the word's next part (quoted,
// an expansion) is not known here, and makes the word dynamic.
func (w *walker) assignTildes(lit string, from int, whole bool) (string, ArgFlag) {
	if !strings.Contains(lit[from:], "~") {
		return lit, 0
	}
	var b strings.Builder
	var flags ArgFlag
	b.WriteString(lit[:from])
	for i := from; i <= len(lit); {
		// lit[i:] starts a segment of the value: up to the next unquoted colon.
		end := i
		for end < len(lit) && !(lit[end] == ':' && (end == 0 || lit[end-1] != '\\')) {
			end++
		}
		seg := lit[i:end]
		if strings.HasPrefix(seg, "~") {
			if strings.IndexByte(seg, '/') < 0 && end == len(lit) && !whole {
				flags |= ArgDynamic // ~ followed by another part: ~"/x", ~$USER
			}
			val, f := w.tilde(seg)
			flags |= f
			seg = val
		}
		b.WriteString(seg)
		if end == len(lit) {
			break
		}
		b.WriteByte(':')
		i = end + 1
	}
	return b.String(), flags
}

// escapeLit protects a value so that unescape gives it back.
func escapeLit(s string) string {
	if !strings.ContainsAny(s, `\*?[`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\*?[`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// part writes the static value of p to b and returns its flags.
func (w *walker) part(b *strings.Builder, p syntax.WordPart, inDbl bool) ArgFlag {
	switch p := p.(type) {
	case *syntax.Lit:
		if inDbl {
			b.WriteString(unescapeDbl(p.Value))
			return 0
		}
		var f ArgFlag
		b.WriteString(unescape(p.Value, &f))
		return f
	case *syntax.SglQuoted:
		if p.Dollar {
			b.WriteString(ansiC(p.Value))
		} else {
			b.WriteString(p.Value)
		}
		return ArgQuoted
	case *syntax.DblQuoted:
		f := ArgQuoted
		for _, q := range p.Parts {
			f |= w.part(b, q, true)
		}
		return f &^ ArgGlob
	case *syntax.ParamExp:
		if inDbl {
			return w.param(b, p)
		}
		// Unquoted: the value is split on blanks and globbed.
		start := b.Len()
		f := w.param(b, p)
		if v := b.String()[start:]; f&ArgDynamic == 0 {
			if strings.ContainsAny(v, " \t\n") {
				f |= argSplit
			}
			if strings.ContainsAny(v, "*?[") {
				f |= ArgGlob
			}
		}
		return f
	case *syntax.CmdSubst:
		if len(p.Stmts) == 0 {
			return 0 // $() expands to nothing
		}
		w.subst(p.Stmts)
		return ArgDynamic
	case *syntax.ArithmExp:
		w.arith(p.X)
		return ArgDynamic
	case *syntax.ProcSubst:
		start := len(w.res.Commands)
		w.subst(p.Stmts)
		if p.Op == syntax.CmdOut {
			w.outs = append(w.outs, [2]int{start, len(w.res.Commands)})
		}
		b.WriteString("/dev/fd/63")
		return ArgDynamic
	case *syntax.ExtGlob:
		return ArgGlob
	}
	return ArgDynamic
}

// param expands a parameter expansion when its value is known.
func (w *walker) param(b *strings.Builder, p *syntax.ParamExp) ArgFlag {
	if p.Excl && p.Names == 0 {
		w.find(FindIndirect, p, "${!"+paramName(p)+"} runs through a name chosen at run time")
	}
	if p.Exp != nil {
		if p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && strings.Contains(p.Exp.Word.Lit(), "P") {
			w.find(FindPrompt, p, "${"+paramName(p)+"@P} expands $(…) stored in a variable")
		}
		if p.Exp.Word != nil {
			w.word(p.Exp.Word)
		}
	}
	if p.Repl != nil {
		if p.Repl.Orig != nil {
			w.word(p.Repl.Orig)
		}
		if p.Repl.With != nil {
			w.word(p.Repl.With)
		}
	}
	if p.Index != nil {
		w.arith(p.Index)
	}
	if p.Slice != nil {
		if p.Slice.Offset != nil {
			w.arith(p.Slice.Offset)
		}
		if p.Slice.Length != nil {
			w.arith(p.Slice.Length)
		}
	}
	if p.Param == nil || p.Excl || p.Length || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Exp != nil {
		return ArgDynamic
	}
	v, ok := w.lookup(p.Param.Value)
	if !ok {
		return ArgDynamic
	}
	b.WriteString(v)
	return 0
}

func paramName(p *syntax.ParamExp) string {
	if p.Param == nil {
		return ""
	}
	return p.Param.Value
}

// unescape removes backslashes the way bash does outside quotes, and notes
// unescaped glob characters.
func unescape(s string, f *ArgFlag) string {
	if !strings.ContainsAny(s, `\*?[`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
			*f |= ArgQuoted
			continue
		case '*', '?':
			*f |= ArgGlob
		case '[':
			if strings.IndexByte(s[i+1:], ']') >= 0 {
				*f |= ArgGlob
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// unescapeDbl removes the backslashes that are special inside double quotes.
func unescapeDbl(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes the escapes of a $'…' string. Like bash, it stops at a NUL.
func ansiC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	out := ansiCAll(s)
	if i := strings.IndexByte(out, 0); i >= 0 {
		return out[:i]
	}
	return out
}

func ansiCAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'x', 'u', 'U':
			max := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		default:
			b.WriteByte(e) // \\ \' \" \?
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
