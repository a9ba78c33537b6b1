package analysis

import "strings"

// git follows git's global options: -C, --git-dir and --work-tree change where
// it works; the values of -c keys that are commands are analysed as commands,
// and so are those set with git config.
func (w *walker) git(idx int) {
	c := w.res.Commands[idx]
	for _, o := range c.Global {
		switch o.Name {
		case "C", "git-dir", "work-tree":
			if o.HasValue {
				w.chdirTo(idx, o.Value, c.OptFlag(o))
			}
		case "c":
			if o.HasValue && !(editorKey(o.Value) && neverEdits[c.Sub]) {
				w.gitConfig(c, o.Value, c.OptFlag(o))
			}
		}
	}
	switch c.Sub {
	case "":
		return
	case "clone":
		// git clone -c KEY=VALUE sets config in the new repository.
		for _, o := range c.Values("c", "config") {
			w.gitConfig(c, o.Value, c.OptFlag(o))
		}
	case "config":
		w.gitConfigSet(c)
	case "submodule":
		w.gitSubmoduleForeach(idx, c.SubAt+1)
	case "bisect":
		if i := c.SubAt; i+2 < len(c.Args) && c.Args[i+1] == "run" {
			w.run(inner(&c, i+2, "git bisect run"), input{})
		}
	}
	w.execOptions(idx, "git "+c.Sub)
}

func (w *walker) gitConfig(c Command, kv string, f ArgFlag) {
	key, val, _ := strings.Cut(kv, "=")
	if f&ArgDynamic != 0 {
		if GitKeyRunsCommand(strings.ToLower(key), "x") || strings.Contains(key, "$") {
			w.findAt(FindEval, c, "git -c "+key+" is a command only known at run time")
		}
		return
	}
	w.gitValue(c, key, val, "git -c ")
}

// gitValue follows a config value git runs as a command; label says how it
// was given: "git -c " for this run, StoredBy (git config) for later ones.
func (w *walker) gitValue(c Command, key, val, label string) {
	key = strings.ToLower(key)
	if !GitKeyRunsCommand(key, val) {
		return
	}
	w.nestedVia(strings.TrimPrefix(val, "!"), label+key, c.Pos, c.Via, true, nil)
}

// StoredBy starts the Via label of a command a line stores for a later run
// (git config core.editor vim) rather than runs: the rules about what it
// does apply, those about how this run behaves (a terminal) do not.
const StoredBy = "git config "

// Stored reports whether c is a command the line stores for later, not one
// it runs.
func (c *Command) Stored() bool {
	for _, v := range c.Via {
		if strings.HasPrefix(v, StoredBy) {
			return true
		}
	}
	return false
}

// gitConfigSet follows "git config [options] [set] KEY VALUE".
func (w *walker) gitConfigSet(c Command) {
	ops := c.Operands
	if len(ops) > 0 && c.Args[ops[0]] == "set" {
		ops = ops[1:]
	}
	if len(ops) < 2 {
		return
	}
	k, v := ops[0], ops[1]
	if c.Flags[v]&ArgDynamic != 0 {
		if GitKeyRunsCommand(strings.ToLower(c.Args[k]), "x") {
			w.findAt(FindEval, c, "git config "+c.Args[k]+" is set to a command only known at run time")
		}
		return
	}
	w.gitValue(c, c.Args[k], c.Args[v], StoredBy)
}

// gitSubmoduleForeach follows git submodule [--quiet] foreach [--recursive] CMD…,
// which runs CMD in a shell in every submodule.
func (w *walker) gitSubmoduleForeach(idx, from int) {
	c := w.res.Commands[idx]
	i := from
	for i < len(c.Args) && strings.HasPrefix(c.Args[i], "-") {
		i++
	}
	if i >= len(c.Args) || c.Args[i] != "foreach" {
		return
	}
	i++
	for i < len(c.Args) && strings.HasPrefix(c.Args[i], "-") {
		i++
	}
	if i >= len(c.Args) {
		return
	}
	if !allStatic(c.Flags[i:]) {
		w.findAt(FindEval, c, "git submodule foreach runs a command only known at run time")
		return
	}
	w.nestedVia(strings.Join(c.Args[i:], " "), "git submodule foreach", c.Pos, c.Via, true, nil)
}

// editorKey reports -c core.editor=… and sequence.editor=…: commands git runs
// only to let a person edit.
func editorKey(kv string) bool {
	k, _, _ := strings.Cut(strings.ToLower(kv), "=")
	return k == "core.editor" || k == "sequence.editor"
}

// neverEdits are git subcommands that never start an editor.
var neverEdits = map[string]bool{
	"status": true, "log": true, "diff": true, "show": true, "ls-files": true, "ls-tree": true, "rev-parse": true,
	"blame": true, "describe": true, "shortlog": true, "cat-file": true, "grep": true, "show-ref": true,
	"for-each-ref": true, "rev-list": true, "reflog": true, "branch": true, "fetch": true, "push": true, "clone": true,
}
