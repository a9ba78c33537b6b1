package analysis

import "strings"

// sqlite follows the sqlite3 shell's dot-commands, given as arguments, with
// -cmd or on standard input: .shell and .system run commands, .output, .once
// and .log write files (or pipe into a command with |), .load loads code.
func (w *walker) sqlite(idx int, stdin input) {
	c := w.res.Commands[idx]
	var texts []string
	var dynamic bool
	db := false
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		if strings.HasPrefix(a, "-") && !db {
			switch strings.TrimLeft(a, "-") {
			case "cmd":
				if i+1 < len(c.Args) {
					i++
					texts = append(texts, c.Args[i])
					dynamic = dynamic || c.Flags[i]&ArgDynamic != 0
				}
			case "init", "separator", "newline", "nullvalue", "maxsize", "mmap", "pagecache", "lookaside", "heap", "vfs", "zip", "readonly-zip", "escape":
				i++
			}
			continue
		}
		if !db {
			db = true
			continue
		}
		texts = append(texts, a)
		dynamic = dynamic || c.Flags[i]&ArgDynamic != 0
	}
	if stdin.present && stdin.known {
		texts = append(texts, stdin.text)
	}
	if dynamic || stdin.present && !stdin.known {
		w.findAt(FindEval, c, "sqlite3 runs SQL or dot-commands only known at run time")
	}
	for _, t := range texts {
		for _, line := range strings.Split(t, "\n") {
			w.sqliteLine(idx, strings.TrimSpace(line))
		}
		l := strings.ToLower(t)
		if strings.Contains(l, "writefile(") || strings.Contains(l, "load_extension(") || strings.Contains(l, "edit(") || strings.Contains(l, "attach") {
			w.findAt(FindEval, c, "sqlite3 SQL that writes files, opens an editor or loads code (writefile, edit, load_extension, attach)")
		}
	}
}

func (w *walker) sqliteLine(idx int, line string) {
	c := w.res.Commands[idx]
	if !strings.HasPrefix(line, ".") {
		return
	}
	cmd, arg, _ := strings.Cut(line[1:], " ")
	arg = strings.Trim(strings.TrimSpace(arg), `"'`)
	switch cmd {
	case "shell", "system":
		w.nestedVia(arg, "sqlite3 ."+cmd, c.Pos, c.Via, true, nil)
	case "output", "once", "log", "save", "backup", "open", "excel":
		for _, f := range strings.Fields(arg) {
			if strings.HasPrefix(f, "-") {
				continue
			}
			if strings.HasPrefix(f, "|") {
				w.nestedVia(strings.TrimPrefix(arg[strings.IndexByte(arg, '|'):], "|"), "sqlite3 ."+cmd, c.Pos, c.Via, true, nil)
				return
			}
			cc := &w.res.Commands[idx]
			cc.Redirects = append(cc.Redirects, Redirect{Op: "sqlite3 ." + cmd, Target: f, Write: true})
			return
		}
	case "read", "import":
		if strings.HasPrefix(arg, "|") {
			w.nestedVia(arg[1:], "sqlite3 ."+cmd, c.Pos, c.Via, true, nil)
		}
	case "load":
		w.findAt(FindEval, c, "sqlite3 .load loads a shared library")
	}
}

// vimCommands follows the ex commands vi, vim and ex run from -c, --cmd, +CMD
// or standard input: :!cmd runs a shell command.
func (w *walker) vimCommands(idx int, stdin input) {
	c := w.res.Commands[idx]
	cmds := w.exCommands(c)
	if stdin.present && stdin.known {
		cmds = append(cmds, strings.Split(stdin.text, "\n")...)
	}
	for _, cmd := range cmds {
		for _, part := range strings.Split(cmd, "|") {
			p := strings.TrimLeft(part, ": \t")
			p = strings.TrimPrefix(strings.TrimPrefix(p, "silent!"), "silent")
			p = strings.TrimLeft(p, " \t")
			if strings.HasPrefix(p, "!") {
				w.nestedVia(p[1:], c.Name+" :!", c.Pos, c.Via, true, nil)
			} else if exMayRun(p) {
				w.findAt(FindEval, c, c.Name+" runs the ex command "+strings.TrimSpace(part)+", which can start programs")
			} else {
				w.exFile(idx, p)
			}
		}
	}
}

// exFile records the file an ex command writes or reads (:w FILE,
// :saveas FILE, :r FILE, :e FILE) as a redirection of the command, as
// sqlite3's .output is: the policy judges where it lands.
func (w *walker) exFile(idx int, p string) {
	// The range first: %, 1,$, .,+3, 'a,'b.
	p = strings.TrimLeft(p, "%0123456789,.$;+- \t")
	for strings.HasPrefix(p, "'") && len(p) > 1 {
		p = strings.TrimLeft(p[2:], ",;'0123456789.$+- \t")
	}
	n := 0
	for n < len(p) && (p[n] >= 'a' && p[n] <= 'z' || p[n] >= 'A' && p[n] <= 'Z') {
		n++
	}
	name, arg := p[:n], strings.TrimPrefix(p[n:], "!")
	arg = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(arg), ">>"))
	write := exWrites[name]
	if arg == "" || !write && !exReads[name] {
		return
	}
	r := Redirect{Op: w.res.Commands[idx].Name + " :" + name, Target: arg, Write: write}
	if strings.HasPrefix(arg, "~") {
		r.Target, _ = w.tilde(arg)
		if r.Target == arg {
			r.Dynamic = true // ~user
		}
	}
	if strings.ContainsAny(arg, "$`") {
		r.Dynamic = true // vim expands variables in file names
	}
	cc := &w.res.Commands[idx]
	cc.Redirects = append(cc.Redirects, r)
}

// exWrites and exReads are the ex commands that write or read the file
// they name.
var (
	exWrites = exSet("w", "write", "wq", "x", "xi", "xit", "exi", "exit", "sav", "saveas", "up", "update",
		"wn", "wnext", "wN", "wNext", "wp", "wprevious")
	exReads = exSet("r", "read", "e", "edit", "sp", "split", "vs", "vsplit", "new", "vne", "vnew", "tabe", "tabedit",
		"sv", "sview", "vie", "view", "bad", "badd")
)

func exSet(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// exCommands are the ex commands given to vi on its command line: -c CMD,
// also bundled (-sc CMD, -esc CMD: vim reads the letters before c as
// flags), -cCMD, --cmd CMD, +CMD.
func (w *walker) exCommands(c Command) []string {
	var cmds []string
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && a[len(a)-1] == 'c' && !strings.Contains(a[1:len(a)-1], "c") {
			a = "-c" // -sc CMD
		}
		switch {
		case (a == "-c" || a == "--cmd" || a == "-S") && i+1 < len(c.Args):
			i++
			if c.Flags[i]&ArgDynamic != 0 {
				w.findAt(FindEval, c, c.Name+" runs an ex command only known at run time")
				continue
			}
			if a == "-S" {
				continue // a script file: judged like a sourced file
			}
			cmds = append(cmds, c.Args[i])
		case strings.HasPrefix(a, "+") && len(a) > 1:
			cmds = append(cmds, a[1:])
		case strings.HasPrefix(a, "-c") && len(a) > 2:
			cmds = append(cmds, a[2:])
		}
	}
	return cmds
}

// exMayRun reports an ex command (after any :silent) that can start programs
// other than by :!cmd: filters, system(), interpreters, :source, :terminal.
func exMayRun(p string) bool {
	if strings.Contains(p, "!") && !strings.HasPrefix(p, "q") && !strings.HasPrefix(p, "w") && !strings.HasPrefix(p, "x") ||
		strings.Contains(p, "system(") || strings.HasPrefix(p, "r !") || strings.HasPrefix(p, "w !") {
		return true
	}
	for _, cmd := range []string{"py", "lua", "perl", "ruby", "so", "term"} {
		if strings.HasPrefix(p, cmd) {
			return true
		}
	}
	return false
}
