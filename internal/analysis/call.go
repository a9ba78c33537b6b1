package analysis

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// input is what a command reads on standard input from a here-document or a
// here-string, when the shell gives it one.
type input struct {
	present bool
	text    string
	known   bool
	file    bool // "< file": a file whose contents are not analysed, like a script argument
}

func (w *walker) call(s *syntax.Stmt, c *syntax.CallExpr) (ok, fail dirs) {
	in := w.cwd
	start := len(w.res.Commands)
	outs := w.outs
	w.outs = nil
	assigns := w.assigns(c.Assigns)
	args := w.words(c.Args)
	redirs, stdin := w.redirects(s.Redirs)
	// The command about to be emitted writes into its >(…) substitutions.
	for _, r := range w.outs {
		for i := r[0]; i < r[1]; i++ {
			w.res.Commands[i].Feeds = append(w.res.Commands[i].Feeds, len(w.res.Commands))
		}
	}
	w.outs = outs
	cmd := Command{
		Pos:       w.pos(s),
		Source:    w.stmtText(s),
		Assigns:   assigns,
		Redirects: redirs,
		Via:       w.via,
		Feeds:     append(append([]int(nil), w.feeds...), span(start, len(w.res.Commands))...),
	}
	if len(args) == 0 {
		cmd.Kind = Redirs
		if len(assigns) > 0 {
			cmd.Kind = Assign
			for i := range cmd.Assigns {
				cmd.Assigns[i].Export = true
				w.assignVar(cmd.Assigns[i], cmd.Pos)
			}
		}
		w.emit(cmd)
		w.commandVars(cmd.Assigns, cmd.Pos, cmd.Via)
		return in, in
	}
	cmd.setWords(args)
	return w.run(cmd, stdin)
}

// setWords makes ws the command's name and arguments.
func (c *Command) setWords(ws []word) {
	c.Path = ws[0].val
	c.Dynamic = !ws[0].static()
	if !c.Dynamic {
		c.Name = programName(c.Path)
	}
	c.Args = make([]string, len(ws)-1)
	c.Flags = make([]ArgFlag, len(ws)-1)
	for i, a := range ws[1:] {
		c.Args[i] = a.val
		c.Flags[i] = a.flags
	}
}

// programName is the program a command word runs, as the rules know it:
// without directories, folded where the file system folds names, and without
// the "g" that Homebrew, MacPorts and the BSDs put before GNU programs
// installed beside the system's own (grm, gcp, gfind, gxargs, gsed, gtar,
// gmake, gtimeout): grm -rf / is rm -rf /, every rule for rm applies.
func programName(p string) string {
	n := foldName(baseName(p))
	if rest, ok := strings.CutPrefix(n, "g"); ok && rest != "" && gnuPrefixed()[rest] {
		return rest
	}
	return n
}

// gnuPrefixed are the programs of GNU coreutils, findutils, sed, tar, make,
// grep, patch and which, as installed with a "g" before their names. Left out:
// od (god is another program), and names whose g-form is another program
// already (gzip is not zip, gunzip not unzip, gcc is itself). Built when first
// asked for: every start of shellgate would pay for it otherwise.
var gnuPrefixed = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Fields(`[ b2sum base32 base64 basename basenc cat chcon chgrp chmod chown chroot
		cksum comm cp csplit cut date dd df dir dircolors dirname du echo env expand expr factor false fmt
		fold groups head hostid id install join kill link ln logname ls md5sum mkdir mkfifo mknod mktemp mv
		nice nl nohup nproc numfmt paste pathchk pinky pr printenv printf ptx pwd readlink realpath rm rmdir
		runcon seq sha1sum sha224sum sha256sum sha384sum sha512sum shred shuf sleep sort split stat stdbuf
		stty sum sync tac tail tee test timeout touch tr true truncate tsort tty uname unexpand uniq unlink
		uptime users vdir wc who whoami yes
		find xargs locate updatedb sed tar make grep egrep fgrep patch which`) {
		m[n] = true
	}
	return m
})

// baseName is the program a command word names: "rm" for "/usr/bin/rm".
func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 && i < len(p)-1 {
		return p[i+1:]
	}
	return p
}

// emit appends c to the result and returns its index.
func (w *walker) emit(c Command) int {
	if c.Args == nil {
		c.Args, c.Flags = []string{}, []ArgFlag{}
	}
	if c.Kind != Redirs && !c.Dynamic && c.Name != "" && c.Opts == nil && c.Operands == nil {
		c.ParseOpts()
	}
	c.Dirs = w.cwd
	if len(c.Dirs) == 1 {
		c.Dir = c.Dirs[0]
	}
	c.Func = w.fn
	c.Background = w.bg > 0
	if w.fn != "" && c.Name == w.fn && (w.bg > 0 || w.pipe > 0) {
		w.res.Findings = append(w.res.Findings, Finding{Kind: FindForkBomb, Pos: c.Pos, Source: c.Source,
			Detail: "function " + w.fn + " starts itself in the background or a pipe"})
	}
	w.res.Commands = append(w.res.Commands, c)
	return len(w.res.Commands) - 1
}

// stmtText is the statement without its trailing ; or &.
func (w *walker) stmtText(s *syntax.Stmt) string {
	st, e := start(s), syntax.Pos{}
	if s.Cmd != nil {
		e = end(s.Cmd)
	}
	for _, r := range s.Redirs {
		re := end(r)
		if r.Hdoc != nil && r.Word != nil {
			re = end(r.Word) // the here-document body is not part of the line
		}
		if re.IsValid() && (!e.IsValid() || re.Offset() > e.Offset()) {
			e = re
		}
	}
	if !st.IsValid() || !e.IsValid() || int(e.Offset()) > len(w.src) || st.Offset() > e.Offset() {
		return strings.TrimRight(w.text(s), " \t;&")
	}
	return w.src[st.Offset():e.Offset()]
}

func (w *walker) assigns(as []*syntax.Assign) []Assignment {
	if len(as) == 0 {
		return nil
	}
	out := make([]Assignment, 0, len(as))
	for _, a := range as {
		if a.Index != nil {
			w.arith(a.Index)
		}
		if a.Name == nil {
			continue
		}
		as := Assignment{Name: a.Name.Value}
		switch {
		case a.Value != nil:
			v := w.assignValue(a.Value)
			as.Value, as.Dynamic = v.val, v.flags&ArgDynamic != 0
		case a.Array != nil:
			for _, e := range a.Array.Elems {
				if e.Index != nil {
					w.arith(e.Index)
				}
				if e.Value != nil {
					w.word(e.Value)
				}
			}
			as.Value, as.Dynamic = w.text(a.Array), true
		case a.Naked:
			continue
		}
		if a.Index != nil || a.Append {
			as.Dynamic = true
		}
		out = append(out, as)
	}
	return out
}

func (w *walker) assignVar(a Assignment, at Pos) {
	if w.ints[a.Name] && (a.Dynamic || !isNumber(a.Value)) {
		w.res.Findings = append(w.res.Findings, Finding{Kind: FindArith, Source: a.Name + "=" + a.Value,
			Pos: at, Detail: a.Name + " is an integer variable: the value assigned to it is evaluated as arithmetic, which runs $(…) in subscripts"})
	}
	if a.Dynamic {
		w.unknownVar(a.Name)
		return
	}
	w.setVar(a.Name, varVal{val: a.Value, known: true, numeric: isNumber(a.Value)})
}

func (w *walker) redirects(rs []*syntax.Redirect) ([]Redirect, input) {
	if len(rs) == 0 {
		return nil, input{}
	}
	var stdin input
	out := make([]Redirect, 0, len(rs))
	for _, r := range rs {
		rd := Redirect{Op: r.Op.String()}
		if r.N != nil {
			rd.Op = r.N.Value + rd.Op
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			text, known := w.heredoc(r.Hdoc)
			rd.Target = w.text(r.Word)
			if r.N == nil || r.N.Value == "0" {
				stdin = input{present: true, text: text, known: known}
			}
			out = append(out, rd)
			continue
		}
		v := w.word(r.Word)
		rd.Target, rd.Dynamic = v.val, v.flags&(ArgDynamic|ArgGlob) != 0
		switch r.Op {
		case syntax.WordHdoc:
			if r.N == nil || r.N.Value == "0" {
				stdin = input{present: true, text: v.val + "\n", known: !rd.Dynamic}
			}
		case syntax.RdrIn:
			if r.N == nil || r.N.Value == "0" {
				stdin = input{present: true, file: !rd.Dynamic}
			}
		case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
			rd.Write = true
		case syntax.DplOut:
			// >&2 and >&- duplicate or close; >&file writes to file.
			rd.Write = rd.Dynamic || !isNumber(rd.Target) && rd.Target != "-"
		}
		out = append(out, rd)
	}
	return out, stdin
}

// heredoc expands a here-document body: like a double-quoted string when the
// delimiter is unquoted, and literally otherwise (the parser then gives only
// literals).
func (w *walker) heredoc(body *syntax.Word) (string, bool) {
	if body == nil {
		return "", true
	}
	var b strings.Builder
	var f ArgFlag
	for _, p := range body.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
			continue
		}
		f |= w.part(&b, p, true)
	}
	return b.String(), f&ArgDynamic == 0
}

func (w *walker) redirectsOnly(s *syntax.Stmt) {
	redirs, _ := w.redirects(s.Redirs)
	w.emit(Command{Kind: Redirs, Pos: w.pos(s), Source: w.stmtText(s), Redirects: redirs, Via: w.via,
		Feeds: append([]int(nil), w.feeds...)})
}

func (w *walker) decl(s *syntax.Stmt, c *syntax.DeclClause) (ok, fail dirs) {
	in := w.cwd
	start := len(w.res.Commands)
	cmd := Command{Kind: Assign, Name: c.Variant.Value, Path: c.Variant.Value, Pos: w.pos(s), Source: w.stmtText(s), Via: w.via}
	nameref, integer := false, false
	for _, a := range c.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			if o := a.Value.Lit(); len(o) > 1 && (o[0] == '-' || o[0] == '+') {
				nameref = nameref || strings.ContainsRune(o, 'n')
				integer = integer || strings.ContainsRune(o, 'i')
			}
		}
	}
	for _, a := range c.Args {
		switch {
		case a.Naked && a.Name == nil && a.Value != nil:
			// A word that is not an assignment to the parser can still be
			// one to the builtin: export "BASH_ENV=x", export {BASH_ENV,X}=x.
			for _, v := range w.words([]*syntax.Word{a.Value}) {
				cmd.Args = append(cmd.Args, v.val)
				cmd.Flags = append(cmd.Flags, v.flags)
				if x, ok := wordAssignment(v); ok {
					x.Export = true
					cmd.Assigns = append(cmd.Assigns, x)
					w.assignVar(x, cmd.Pos)
					if nameref {
						w.unknownVar(x.Name)
					}
				}
			}
		case a.Naked && a.Name != nil:
			cmd.Args = append(cmd.Args, a.Name.Value)
			cmd.Flags = append(cmd.Flags, 0)
			if c.Variant.Value == "local" || c.Variant.Value == "declare" || c.Variant.Value == "typeset" || nameref {
				w.unknownVar(a.Name.Value)
			}
			if integer {
				w.markInteger(a.Name.Value)
			}
		default:
			as := w.assigns([]*syntax.Assign{a})
			for _, x := range as {
				x.Export = true
				cmd.Assigns = append(cmd.Assigns, x)
				cmd.Args = append(cmd.Args, x.Name+"="+x.Value)
				var f ArgFlag
				if x.Dynamic {
					f = ArgDynamic
				}
				cmd.Flags = append(cmd.Flags, f)
				if integer {
					w.markInteger(x.Name)
				}
				w.assignVar(x, cmd.Pos)
				if nameref {
					// A name reference: the variable stands for another one.
					w.unknownVar(x.Name)
				}
			}
		}
	}
	cmd.Redirects, _ = w.redirects(s.Redirs)
	cmd.Feeds = append(append([]int(nil), w.feeds...), span(start, len(w.res.Commands))...)
	w.subscripts(cmd)
	w.emit(cmd)
	w.commandVars(cmd.Assigns, cmd.Pos, cmd.Via)
	return in, in
}

// wordAssignment reads NAME=VALUE from a word given to export, declare and
// their kin. A dynamic word may be an assignment to any name: its Name is "".
func wordAssignment(v word) (Assignment, bool) {
	if v.flags&ArgDynamic != 0 {
		if strings.HasPrefix(v.val, "-") {
			return Assignment{}, false
		}
		return Assignment{Value: v.val, Dynamic: true}, strings.Contains(v.val, "=")
	}
	eq := strings.IndexByte(v.val, '=')
	name := v.val[:max(eq, 0)]
	name = strings.TrimSuffix(name, "+")
	if eq <= 0 || !isName(name) {
		return Assignment{}, false
	}
	return Assignment{Name: name, Value: v.val[eq+1:]}, true
}
