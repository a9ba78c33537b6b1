package analysis

import (
	"mvdan.cc/sh/v3/syntax"
	"slices"
	"strings"

	"github.com/shellgate/shellgate/internal/realpath"
)

// walker visits a syntax tree in execution order, emitting commands.
type walker struct {
	o       Options
	res     *Analysis
	resolve func(string) string

	src   string // the text being walked: the input, or a string being re-parsed
	outer *Pos   // inside a re-parsed string: where that string stands in the input
	via   []string
	depth int

	cwd     dirs // where the statement being walked starts
	vars    map[string]varVal
	funcs   map[string]*funcDef // functions defined so far
	defs    []defWalk           // each definition's walk with its arguments unknown
	calling map[string]bool     // functions being walked at a call site
	calls   int                 // function bodies walked at call sites, bounded by maxCalls
	traps   []trapDef           // trap actions, walked again at the end
	aliases map[string]string   // alias bodies
	ints    map[string]bool     // variables declared -i

	fn         string      // enclosing function
	bg         int         // inside a background statement
	pipe       int         // inside a pipeline
	cond       int         // inside a branch that may or may not run
	feeds      []int       // commands whose output the statement being walked reads
	overSpent  func() bool // whether the budget is spent
	overBudget bool
	costly     string // why the analysis stopped early, when not for time
	steps      int    // statements walked, to look at the clock now and then

	// outs are the commands of >(…) substitutions in the words being walked:
	// they read what the command that holds the words writes.
	outs [][2]int

	items int // walking loops' bodies once per item: how many times (eachItem)

	shellArgs *shellArgs // sh -c SCRIPT's words after it, for the shell nestedVia starts next
}

// varVal is what is known about a shell variable assigned in the line.
type varVal struct {
	val     string
	known   bool // val is its value
	numeric bool // its value is a number (even if unknown)
}

// maxDepth bounds strings re-parsed inside strings (bash -c 'eval "sh -c …"').
const maxDepth = 16

// maxCalls bounds the function bodies walked again at their call sites
// (f2 calls f1 twice, which calls f0 twice …).
const maxCalls = 256

// funcDef is a function and where it was defined.
type funcDef struct {
	body  *syntax.Stmt
	src   string
	outer *Pos
	def   int // its defWalk
}

// defWalk is what walking a function's body at its definition found (the
// commands and findings in [cmds[0], cmds[1]) and [finds[0], finds[1])), and
// how it was called: calls followed, and whether one was not.
type defWalk struct {
	cmds, finds [2]int
	calls       int
	unfollowed  bool
}

// trapDef is a trap action, which runs later in whatever state the shell is in.
type trapDef struct {
	text string
	at   Pos
	via  []string
}

func newWalker(src string, o Options) *walker {
	w := &walker{o: o, res: &Analysis{Commands: make([]Command, 0, 4)}, src: src, resolve: o.Resolve}
	if w.resolve == nil {
		w.resolve = realpath.Resolve
	}
	start := o.Dir
	if start == "" {
		start = o.Root
	}
	if start != "" {
		w.cwd = dirs{w.resolve(start)}
	}
	return w
}

func (w *walker) lookup(name string) (string, bool) {
	if v, ok := w.vars[name]; ok {
		return v.val, v.known
	}
	if v, ok := w.o.Vars[name]; ok {
		return v, true
	}
	switch name {
	case "HOME":
		return w.o.Home, w.o.Home != ""
	case "PWD":
		if len(w.cwd) == 1 {
			return w.cwd[0], true
		}
	}
	return "", false
}

// setVar records an assignment. In a branch that may not run, the old value may
// survive, so the variable becomes unknown.
func (w *walker) setVar(name string, v varVal) {
	if w.vars == nil {
		w.vars = map[string]varVal{}
	}
	if w.cond > 0 {
		old, had := w.vars[name]
		if !had || old != v {
			v = varVal{numeric: v.numeric && had && old.numeric}
		}
	}
	w.vars[name] = v
}

func (w *walker) unknownVar(name string) { w.setVar(name, varVal{}) }

// maxPositional is the highest positional parameter followed: $1 … $9
// ($10 is ${1}0 to bash).
const maxPositional = 9

// positionalNames are "1" … "9".
var positionalNames = [maxPositional]string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}

// setPositional gives $1 … $9 the words args, as a function call or set --
// does, and returns what they were. A word only known at run time, or a glob
// (which may be any number of words), leaves it and every later one unknown;
// past the last word they are empty, unless more words come at run time.
func (w *walker) setPositional(args []string, flags []ArgFlag, more bool) map[string]*varVal {
	if w.vars == nil {
		w.vars = map[string]varVal{}
	}
	saved := map[string]*varVal{}
	known := true
	for i, name := range positionalNames {
		if old, had := w.vars[name]; had {
			saved[name] = &old
		} else {
			saved[name] = nil
		}
		switch {
		case i < len(args) && known && flags[i]&(ArgDynamic|ArgGlob) == 0:
			w.vars[name] = varVal{val: args[i], known: true, numeric: isNumber(args[i])}
		case i >= len(args) && known && !more:
			w.vars[name] = varVal{known: true}
		default:
			known = false
			w.vars[name] = varVal{}
		}
	}
	return saved
}

// restorePositional puts back what setPositional found.
func (w *walker) restorePositional(saved map[string]*varVal) {
	for name, v := range saved {
		if v == nil {
			delete(w.vars, name)
		} else {
			w.vars[name] = *v
		}
	}
}

// positionalUnknown forgets $1 … $9 (shift, or set in a branch).
func (w *walker) positionalUnknown() {
	for _, name := range positionalNames {
		w.unknownVar(name)
	}
}

// maxItems bounds the loops walked once per item (eachItem), and
// maxItemWalks the times a body inside such loops is walked.
const maxItems, maxItemWalks = 4, 16

// eachItem walks the body of a for or select loop over a few words known
// before it runs once per word, with the variable set to it, as the shell
// runs it: `for f in ~/.ssh/*; do cat "$f"; done` reads what `cat ~/.ssh/*`
// reads. A glob item is the pattern (what it matches is read). Loops over
// more words, or words only known at run time, or nested past maxItemWalks,
// are walked once with the variable unknown (ok false).
func (w *walker) eachItem(c *syntax.ForClause, name string, items []word, in dirs) (dirs, bool) {
	times := max(w.items, 1) * len(items)
	if len(items) == 0 || len(items) > maxItems || times > maxItemWalks || slices.ContainsFunc(items, func(it word) bool { return it.flags&ArgDynamic != 0 }) {
		return nil, false
	}
	outer := w.items
	w.items = times
	defer func() { w.items = outer }()
	w.cond++
	all := in
	for _, it := range items {
		w.cwd = in
		if w.vars == nil {
			w.vars = map[string]varVal{}
		}
		// In the body it holds the item, whatever branch the loop is in.
		w.vars[name] = varVal{val: it.val, known: true, numeric: isNumber(it.val)}
		x, y := w.stmts(c.Do)
		all = union(all, union(x, y))
	}
	w.unknownVar(name) // the last item, or another if a break left early
	w.cond--
	w.cwd = all
	return all, true
}

// markInteger records declare -i: later assignments are evaluated as arithmetic.
func (w *walker) markInteger(name string) {
	if w.ints == nil {
		w.ints = map[string]bool{}
	}
	w.ints[name] = true
}

func (w *walker) pos(n syntax.Node) Pos {
	if w.outer != nil {
		return *w.outer
	}
	p := start(n)
	return Pos{Line: int(p.Line()), Col: int(p.Col())}
}

// text is the source of n in the string being walked.
func (w *walker) text(n syntax.Node) string {
	s, e := start(n), end(n)
	if !s.IsValid() || !e.IsValid() {
		return ""
	}
	so, eo := int(s.Offset()), int(e.Offset())
	if so > eo || eo > len(w.src) {
		return ""
	}
	return w.src[so:eo]
}

// start is where n begins. A statement's own position can be off (the parser
// places "coproc CMD"'s inner statement at its first argument), so take the
// earlier of it and its command's.
func start(n syntax.Node) (p syntax.Pos) {
	defer func() {
		if recover() != nil { // a node built by brace expansion may have no position
			p = syntax.Pos{}
		}
	}()
	p = n.Pos()
	if s, ok := n.(*syntax.Stmt); ok && s.Cmd != nil {
		if q := s.Cmd.Pos(); q.IsValid() && (!p.IsValid() || q.Offset() < p.Offset()) {
			p = q
		}
	}
	return p
}

func end(n syntax.Node) (p syntax.Pos) {
	defer func() {
		if recover() != nil {
			p = syntax.Pos{}
		}
	}()
	return n.End()
}

func (w *walker) find(k FindingKind, n syntax.Node, detail string) {
	w.res.Findings = append(w.res.Findings, Finding{Kind: k, Pos: w.pos(n), Source: w.text(n), Detail: detail})
}

// subshell runs f with directory and variables restored afterwards.
func (w *walker) subshell(f func()) {
	cwd := w.cwd
	var vars map[string]varVal
	if len(w.vars) > 0 {
		vars = make(map[string]varVal, len(w.vars))
		for k, v := range w.vars {
			vars[k] = v
		}
	}
	f()
	w.cwd, w.vars = cwd, vars
}

// subst walks a command or process substitution.
func (w *walker) subst(stmts []*syntax.Stmt) {
	feeds := w.feeds
	w.feeds = nil
	w.subshell(func() { w.stmts(stmts) })
	w.feeds = feeds
}

// stmts walks a list and returns the directories it may end in, after success
// and after failure.
func (w *walker) stmts(ss []*syntax.Stmt) (ok, fail dirs) {
	ok, fail = w.cwd, w.cwd
	for i, s := range ss {
		if i > 0 {
			w.cwd = union(ok, fail)
		}
		ok, fail = w.stmt(s)
	}
	w.cwd = union(ok, fail)
	return ok, fail
}

func (w *walker) stmt(s *syntax.Stmt) (ok, fail dirs) {
	in := w.cwd
	if w.steps++; w.steps&1023 == 0 && !w.overBudget && w.overSpent != nil && w.overSpent() {
		w.overBudget = true
	}
	if w.overBudget {
		return nil, nil // the result is refused anyway
	}
	if s.Background {
		w.bg++
		w.cond++
		w.subshell(func() { w.command(s) })
		w.cond--
		w.bg--
		return in, in
	}
	ok, fail = w.command(s)
	if s.Negated {
		ok, fail = fail, ok
	}
	return ok, fail
}

func (w *walker) command(s *syntax.Stmt) (ok, fail dirs) {
	in := w.cwd
	if _, simple := s.Cmd.(*syntax.CallExpr); !simple && len(s.Redirs) > 0 {
		// A compound command's redirections apply to all of it.
		w.redirectsOnly(s)
	}
	switch c := s.Cmd.(type) {
	case nil:
		if len(s.Redirs) > 0 {
			w.redirectsOnly(s)
		}
		return in, in
	case *syntax.CallExpr:
		return w.call(s, c)
	case *syntax.BinaryCmd:
		return w.binary(c)
	case *syntax.Subshell:
		w.subshell(func() { w.stmts(c.Stmts) })
		return in, in
	case *syntax.Block:
		return w.stmts(c.Stmts)
	case *syntax.IfClause:
		return w.ifClause(c)
	case *syntax.WhileClause:
		w.cond++
		a, b := w.stmts(c.Cond)
		w.cwd = union(a, b)
		x, y := w.stmts(c.Do)
		w.cond--
		all := union(union(in, union(a, b)), union(x, y))
		w.cwd = all
		return all, all
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			ws := w.words(l.Items)
			if all, ok := w.eachItem(c, l.Name.Value, ws, in); ok {
				return all, all
			}
			w.cond++
			w.unknownVar(l.Name.Value)
		case *syntax.CStyleLoop:
			// The initialiser and the first test always run; the rest may not.
			for _, e := range []syntax.ArithmExpr{l.Init, l.Cond} {
				if e != nil {
					w.arith(e)
				}
			}
			w.cond++
			if l.Post != nil {
				w.arith(l.Post)
			}
		}
		x, y := w.stmts(c.Do)
		w.cond--
		all := union(in, union(x, y))
		w.cwd = all
		return all, all
	case *syntax.CaseClause:
		w.word(c.Word)
		all := in
		w.cond++
		for _, item := range c.Items {
			w.cwd = in
			w.words(item.Patterns)
			x, y := w.stmts(item.Stmts)
			all = union(all, union(x, y))
		}
		w.cond--
		w.cwd = all
		return all, all
	case *syntax.FuncDecl:
		return w.funcDecl(c)
	case *syntax.ArithmCmd:
		w.arith(c.X)
		return in, in
	case *syntax.TestClause:
		w.test(c.X)
		return in, in
	case *syntax.DeclClause:
		return w.decl(s, c)
	case *syntax.LetClause:
		for _, e := range c.Exprs {
			w.arith(e)
		}
		return in, in
	case *syntax.TimeClause:
		if c.Stmt != nil {
			return w.stmt(c.Stmt)
		}
		return in, in
	case *syntax.CoprocClause:
		w.bg++
		w.cond++
		w.subshell(func() { w.stmt(c.Stmt) })
		w.cond--
		w.bg--
		return in, in
	case *syntax.TestDecl:
		w.cond++
		w.subshell(func() { w.stmt(c.Body) })
		w.cond--
		return in, in
	}
	return in, in
}

func (w *walker) binary(c *syntax.BinaryCmd) (ok, fail dirs) {
	in := w.cwd
	switch c.Op {
	case syntax.AndStmt:
		okX, failX := w.stmt(c.X)
		w.cwd = okX
		w.cond++
		okY, failY := w.stmt(c.Y)
		w.cond--
		ok, fail = okY, union(failX, failY)
	case syntax.OrStmt:
		okX, failX := w.stmt(c.X)
		w.cwd = failX
		w.cond++
		okY, failY := w.stmt(c.Y)
		w.cond--
		ok, fail = union(okX, okY), failY
	default: // | and |&: every stage runs in a subshell, reading the one before
		w.pipeline(c)
		return in, in
	}
	w.cwd = union(ok, fail)
	return ok, fail
}

// pipeline walks a | b | … stage by stage: each stage reads the output of
// the one before (only that one: policy follows the chain back).
func (w *walker) pipeline(c *syntax.BinaryCmd) {
	stages := pipeStages(nil, c)
	feeds := w.feeds
	prev := [2]int{-1, -1}
	w.pipe++
	for k, st := range stages {
		start := len(w.res.Commands)
		w.feeds = feeds
		if prev[0] >= 0 {
			w.feeds = append(append([]int(nil), feeds...), span(prev[0], prev[1])...)
		}
		w.subshell(func() { w.stmt(st) })
		if k < len(stages)-1 {
			for i := start; i < len(w.res.Commands); i++ {
				if w.res.Commands[i].Func == w.fn {
					w.res.Commands[i].PipedOut = true
				}
			}
		}
		prev = [2]int{start, len(w.res.Commands)}
	}
	w.pipe--
	w.feeds = feeds
}

// pipeStages flattens a pipeline into its stages, in order.
func pipeStages(out []*syntax.Stmt, c *syntax.BinaryCmd) []*syntax.Stmt {
	for _, s := range []*syntax.Stmt{c.X, c.Y} {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) &&
			!s.Negated && !s.Background && len(s.Redirs) == 0 {
			out = pipeStages(out, b)
			continue
		}
		out = append(out, s)
	}
	return out
}

func span(start, end int) []int {
	s := make([]int, 0, end-start)
	for i := start; i < end; i++ {
		s = append(s, i)
	}
	return s
}

func (w *walker) ifClause(c *syntax.IfClause) (ok, fail dirs) {
	in := w.cwd
	w.cond++
	defer func() { w.cond-- }()
	if c.ThenPos.IsValid() || len(c.Cond) > 0 {
		okC, failC := w.stmts(c.Cond)
		w.cwd = okC
		okT, failT := w.stmts(c.Then)
		if c.Else == nil {
			ok, fail = union(okT, failC), failT
		} else {
			w.cwd = failC
			okE, failE := w.ifClause(c.Else)
			ok, fail = union(okT, okE), union(failT, failE)
		}
	} else { // else branch
		w.cwd = in
		ok, fail = w.stmts(c.Then)
	}
	w.cwd = union(ok, fail)
	return ok, fail
}

func (w *walker) funcDecl(c *syntax.FuncDecl) (ok, fail dirs) {
	in := w.cwd
	name := ""
	if c.Name != nil {
		name = c.Name.Value
	}
	// The body runs whenever the function is called (by name, from a trap,
	// an alias …), with variables as they are then: walk it now with every
	// variable unknown, and again at each call site seen.
	fn := w.fn
	w.fn = name
	w.cond++
	d := defWalk{cmds: [2]int{len(w.res.Commands)}, finds: [2]int{len(w.res.Findings)}}
	w.subshell(func() {
		w.vars = nil
		w.stmt(c.Body)
	})
	d.cmds[1], d.finds[1] = len(w.res.Commands), len(w.res.Findings)
	w.defs = append(w.defs, d)
	w.cond--
	w.fn = fn
	if w.funcs == nil {
		w.funcs = map[string]*funcDef{}
	}
	w.funcs[name] = &funcDef{body: c.Body, src: w.src, outer: w.outer, def: len(w.defs) - 1}
	return in, in
}

// callFunc walks a function's body where it is called: it runs in this shell,
// so its cd and assignments count.
func (w *walker) callFunc(c Command, fd *funcDef) (ok, fail dirs) {
	if w.calling[c.Name] && (w.bg > 0 || w.pipe > 0) {
		// a(){ b|b& }; b(){ a|a& }: recursion through a pipe or the
		// background multiplies processes without bound.
		w.res.Findings = append(w.res.Findings, Finding{Kind: FindForkBomb, Pos: c.Pos, Source: c.Source,
			Detail: "function " + c.Name + " is called again, through a pipe or the background, from a function it calls"})
	}
	if w.calling[c.Name] || w.calls >= maxCalls || w.depth >= maxDepth {
		w.defs[fd.def].unfollowed = true
		if w.calls >= maxCalls {
			w.findAt(FindDepth, c, "more function calls than shellgate follows")
		}
		return nil, nil // recursion: where it ends is not followed
	}
	w.calls++
	w.defs[fd.def].calls++
	if w.calling == nil {
		w.calling = map[string]bool{}
	}
	w.calling[c.Name] = true
	src, outer, via, fn := w.src, w.outer, w.via, w.fn
	w.src, w.outer, w.fn = fd.src, fd.outer, c.Name
	if outer != nil {
		w.outer = outer // report the call site inside a re-parsed string
	}
	w.via = append(append([]string(nil), c.Via...), c.Name+"()")
	saved := w.setPositional(c.Args, c.Flags, c.MoreArgs)
	ok, fail = w.stmt(fd.body)
	w.restorePositional(saved)
	w.src, w.outer, w.via, w.fn = src, outer, via, fn
	delete(w.calling, c.Name)
	return ok, fail
}

// supersede marks the commands of a function's body as walked at its
// definition, with its arguments unknown, Superseded where every call of it
// was followed with the words it was given (f(){ rm -rf "$1"; }; f build is
// rm -rf build, judged at the call), and drops the findings of that walk. A
// definition stands where the function is never called, a call was not
// followed (recursion, too many), or it may be called in a way not seen:
// exported to other shells, or from a command, eval, trap, alias, prompt or
// sourced file only known at run time, outside its own body.
func (w *walker) supersede() {
	var escapes [][2]int // commands (0) or findings (1) that may call anything
	for i := range w.res.Commands {
		c := &w.res.Commands[i]
		if c.Dynamic || c.Name == "source" || c.Name == "." || exportsFunctions(c) {
			escapes = append(escapes, [2]int{0, i})
		}
	}
	for i, f := range w.res.Findings {
		if f.Kind == FindEval || f.Kind == FindTrap || f.Kind == FindAlias || f.Kind == FindPrompt {
			escapes = append(escapes, [2]int{1, i})
		}
	}
	if len(escapes) > maxCalls {
		return
	}
	drop := map[int]bool{}
	for _, d := range w.defs {
		if d.calls == 0 || d.unfollowed || slices.ContainsFunc(escapes, func(e [2]int) bool {
			r := d.cmds
			if e[0] == 1 {
				r = d.finds
			}
			return e[1] < r[0] || e[1] >= r[1] // outside its own body
		}) {
			continue
		}
		for i := d.cmds[0]; i < d.cmds[1]; i++ {
			w.res.Commands[i].Superseded = true
		}
		for i := d.finds[0]; i < d.finds[1]; i++ {
			drop[i] = true
		}
	}
	if len(drop) > 0 {
		kept := w.res.Findings[:0]
		for i, f := range w.res.Findings {
			if !drop[i] || f.Kind == FindForkBomb || f.Kind == FindDepth || f.Kind == FindParse || f.Kind == FindStdinShell {
				kept = append(kept, f)
			}
		}
		w.res.Findings = kept
	}
}

// exportsFunctions reports export -f, declare -fx and the like: the
// functions reach every bash started later, called there however it likes.
func exportsFunctions(c *Command) bool {
	if c.Name != "export" && c.Name != "declare" && c.Name != "typeset" {
		return false
	}
	for i, a := range c.Args {
		if c.Flags[i]&ArgDynamic != 0 || strings.HasPrefix(a, "-") && strings.Contains(a, "f") {
			return true
		}
	}
	return false
}
