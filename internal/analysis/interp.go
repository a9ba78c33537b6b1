package analysis

import (
	"slices"
	"strings"
)

// A language's calls that run a command line or a program (os.system,
// subprocess.run, child_process.execSync, perl's system): the commands given
// to them as string literals in code on an interpreter's command line
// (python -c, node -e, perl -e, ruby -e) are analysed as commands; anything
// else given to them is a command only known at run time.
type language struct {
	// code returns the program text given on the command line, if any.
	code func(c Command) (string, bool)
	// calls are the function names that run commands, looked for only where
	// the code names one of modules ("" : always).
	calls   []string
	modules []string
	// backticks: `cmd` and qx/%x run cmd (perl, ruby).
	backticks bool
}

var languages = map[string]language{
	"python": {code: pythonCode, modules: []string{"os", "subprocess", "pty", "commands"},
		calls: []string{"system", "popen", "run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput",
			"spawn", "execl", "execlp", "execle", "execv", "execvp", "execve", "execvpe", "spawnl", "spawnlp", "spawnv", "spawnvp"}},
	"node": {code: optionCode("e", "eval", "p", "print"), modules: []string{"child_process"},
		calls: []string{"exec", "execSync", "execFile", "execFileSync", "spawn", "spawnSync", "fork"}},
	"perl": {code: optionCode("e", "E"), calls: []string{"system", "exec"}, backticks: true},
	"ruby": {code: optionCode("e"), calls: []string{"system", "exec", "spawn"}, backticks: true},
}

// languageOf is the language program name runs, if it is one of languages.
func languageOf(name string) (language, bool) {
	switch {
	case IsPython(name):
		return languages["python"], true
	case name == "nodejs":
		return languages["node"], true
	}
	l, ok := languages[name]
	return l, ok
}

func pythonCode(c Command) (string, bool) {
	if v := c.Values("c"); len(v) > 0 && c.OptFlag(v[0])&ArgDynamic == 0 {
		return v[0].Value, true
	}
	return "", false
}

// optionCode returns the code of -e CODE (or the other names given), read
// word by word: these interpreters take it as the next word or attached.
func optionCode(names ...string) func(c Command) (string, bool) {
	return func(c Command) (string, bool) {
		var parts []string
		for i := 0; i < len(c.Args); i++ {
			a := c.Args[i]
			for _, n := range names {
				flag := "-" + n
				if len(n) > 1 {
					flag = "--" + n
				}
				switch {
				case a == flag && i+1 < len(c.Args) && c.Flags[i+1]&ArgDynamic == 0:
					parts = append(parts, c.Args[i+1])
				case len(n) > 1 && strings.HasPrefix(a, flag+"=") && c.Flags[i]&ArgDynamic == 0:
					parts = append(parts, a[len(flag)+1:])
				}
			}
		}
		return strings.Join(parts, "\n"), len(parts) > 0
	}
}

// interpreterCode follows the commands the code on an interpreter's command
// line runs.
func (w *walker) interpreterCode(c Command, l language) {
	code, ok := l.code(c)
	if !ok {
		return
	}
	label := c.Name + " code"
	if mentions(code, l.modules) {
		calls := callsIn(code, l.calls)
		if len(calls) == 0 && len(l.modules) > 0 && mentions(code, l.calls) {
			w.findAt(FindEval, c, c.Name+" names a function that runs commands in a way shellgate does not follow")
		}
		for _, call := range calls {
			if call.text == "" {
				w.findAt(FindEval, c, c.Name+" runs a command it computes: "+call.name+"(…)")
				continue
			}
			w.nestedVia(call.text, label, c.Pos, c.Via, true, nil)
		}
	}
	if l.backticks {
		for _, cmd := range backticked(code) {
			if strings.ContainsAny(cmd, "$#@") {
				w.findAt(FindEval, c, c.Name+" runs a command it computes in backticks")
				continue
			}
			w.nestedVia(cmd, label, c.Pos, c.Via, true, nil)
		}
	}
}

// mentions reports whether code names one of modules as a word (or modules is empty).
func mentions(code string, modules []string) bool {
	if len(modules) == 0 {
		return true
	}
	for _, m := range modules {
		for i := strings.Index(code, m); i >= 0; {
			end := i + len(m)
			if (i == 0 || !isIdent(code[i-1])) && (end == len(code) || !isIdent(code[end])) {
				return true
			}
			next := strings.Index(code[end:], m)
			if next < 0 {
				break
			}
			i = end + next
		}
	}
	return false
}

func isIdent(b byte) bool {
	return b == '_' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

// call is one call of a command-running function: text is the command line
// it runs, "" when that is not made of literals.
type call struct{ name, text string }

// callsIn finds the calls of fns in code (name followed by "("), with what
// their literal arguments make: one string is a command line; a list, or a
// string followed by a list or by more strings, is the words of a command.
func callsIn(code string, fns []string) []call {
	var out []call
	for i := 0; i < len(code); i++ {
		if !isIdent(code[i]) || i > 0 && isIdent(code[i-1]) {
			continue
		}
		j := i
		for j < len(code) && isIdent(code[j]) {
			j++
		}
		name := code[i:j]
		k := j
		for k < len(code) && code[k] == ' ' {
			k++
		}
		paren := k < len(code) && code[k] == '('
		bare := k > j && k < len(code) && (code[k] == '"' || code[k] == '\'') // perl, ruby: system "cmd"
		if !paren && !bare || !slices.Contains(fns, name) {
			i = j - 1
			continue
		}
		if paren {
			k++
		}
		out = append(out, call{name: name, text: commandOf(code[k:])})
		i = k - 1
	}
	return out
}

// commandOf reads a call's arguments (after its "(", or after the name in
// perl and ruby's call without parentheses) as far as they are literals, and
// returns the command they make, or "".
func commandOf(args string) string {
	var items [][]string // each argument: a string, or a list of them
	lists := 0
	for {
		args = strings.TrimLeft(args, " \t\n")
		var ws []string
		var ok bool
		if strings.HasPrefix(args, "[") {
			ws, args, ok = literalList(args[1:])
			lists++
		} else {
			var w string
			w, args, ok = literal(args)
			ws = []string{w}
		}
		if !ok {
			break // shell=True, options: the command is what came before
		}
		items = append(items, ws)
		args = strings.TrimLeft(args, " \t\n")
		if strings.HasPrefix(args, ",") {
			args = args[1:]
			continue
		}
		if args != "" && strings.IndexByte(");\n}", args[0]) < 0 {
			return "" // concatenated, formatted: computed
		}
		break
	}
	switch {
	case len(items) == 0:
		return ""
	case len(items) == 1 && lists == 0:
		return items[0][0] // a command line
	}
	var words []string
	for _, ws := range items {
		for _, w := range ws {
			words = append(words, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
		}
	}
	return strings.Join(words, " ")
}

// literal reads a string literal at the start of s ('…' or "…", a Python
// r/b/u prefix; not an f-string), returning its text and the rest.
func literal(s string) (text, rest string, ok bool) {
	raw := false
	for len(s) > 1 && strings.IndexByte("rRbBuU", s[0]) >= 0 && (s[1] == '\'' || s[1] == '"' || strings.IndexByte("rRbB", s[1]) >= 0) {
		raw = raw || s[0] == 'r' || s[0] == 'R'
		s = s[1:]
	}
	if s == "" || s[0] != '\'' && s[0] != '"' {
		return "", s, false
	}
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '\\' && !raw && i+1 < len(s):
			i++
			if s[i] == 'n' {
				b.WriteByte('\n')
			} else {
				b.WriteByte(s[i])
			}
		case ch == q:
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(ch)
		}
	}
	return "", s, false
}

// literalList reads string literals up to "]".
func literalList(s string) (words []string, rest string, ok bool) {
	words = []string{}
	for {
		s = strings.TrimLeft(s, " \t\n")
		if strings.HasPrefix(s, "]") {
			return words, s[1:], true
		}
		w, r, ok := literal(s)
		if !ok {
			return nil, s, false
		}
		words = append(words, w)
		s = strings.TrimLeft(r, " \t\n")
		s = strings.TrimPrefix(s, ",")
	}
}

// backticked are the commands in `…`, qx{…}/qx(…) and %x(…) of perl and ruby code.
func backticked(code string) []string {
	var out []string
	for i := 0; i < len(code); i++ {
		open, end := "", ""
		switch {
		case code[i] == '`':
			open, end = "`", "`"
		case strings.HasPrefix(code[i:], "qx") && i+2 < len(code) && (i == 0 || !isIdent(code[i-1])):
			open, end = code[i:i+3], closing(code[i+2])
		case strings.HasPrefix(code[i:], "%x") && i+2 < len(code):
			open, end = code[i:i+3], closing(code[i+2])
		}
		if open == "" || end == "" {
			continue
		}
		j := strings.Index(code[i+len(open):], end)
		if j < 0 {
			out = append(out, "$unknown") // unterminated: judged as computed
			break
		}
		out = append(out, code[i+len(open):i+len(open)+j])
		i += len(open) + j + len(end) - 1
	}
	return out
}

// closing is the delimiter that ends one opened with b.
func closing(b byte) string {
	switch b {
	case '(':
		return ")"
	case '{':
		return "}"
	case '[':
		return "]"
	case '<':
		return ">"
	case ' ', '\t', '\n':
		return ""
	}
	if isIdent(b) {
		return ""
	}
	return string(b)
}
