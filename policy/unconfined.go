package policy

import (
	"os/user"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/shellgate/shellgate/internal/analysis"
)

// What the policy lets through because a sandbox contains it, asked about when
// none will (Settings.Unconfined): a hook's agent runs the command in its own
// shell, where a program given on the command line can do anything and the
// secrets the sandbox hides are there to read.

// interpreter is what unconfined knows of an interpreter's options: the
// letters and long names of those whose value is the program to run (-c,
// -e, --eval), the letters of those that take a value (-W error, -r lib),
// and the letters that name the program another way, a module or a file
// (python -m).
type interpreter struct{ short, long, value, other string }

// inlineOpts are the interpreters whose program may be given on the command
// line, and how.
var inlineOpts = map[string]interpreter{
	"python": {short: "c", value: "WX", other: "m"}, "pypy": {short: "c", value: "WX", other: "m"}, "pypy3": {short: "c", value: "WX", other: "m"},
	"ipython": {short: "c", other: "m"},
	"perl":    {short: "eE", value: "IMmx"}, "ruby": {short: "e", value: "IrCEWx"},
	"node": {short: "ep", long: "--eval --print", value: "rC"}, "nodejs": {short: "ep", long: "--eval --print", value: "rC"},
	"bun": {short: "e", long: "--eval --print", value: "r"},
	"php": {short: "rBRE", value: "dczF"}, "lua": {short: "e", value: "l"}, "luajit": {short: "e", value: "lbj"},
	"Rscript": {short: "e"}, "R": {short: "e"}, "osascript": {short: "e", value: "ls"}, "tclsh": {},
	"julia":  {short: "eE", long: "--eval --print", value: "CJLtp"},
	"expect": {short: "c"}, "guile": {short: "c", value: "lLx"}, "groovy": {short: "e"}, "scala": {short: "e"},
	"elixir": {short: "e", long: "--eval"}, "racket": {short: "e", long: "--eval"},
}

// scanInterpreter reads an interpreter's options as far as its program: the
// option through which the program is given on the command line ("-c",
// "--eval"), or stdin when the program is standard input (named `-` or
// /dev/stdin, or no program file named at all); ok is false when a word is
// only known at run time. A word after an option that may take it as its
// value (-W error, --require lib, --title x) is read as that value, not as
// the program file, so that the scan goes on past it.
func scanInterpreter(c *analysis.Command, o interpreter) (inline string, stdin, ok bool) {
	value := false
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		switch {
		case c.IsDynamic(i):
			return "", false, false
		case value && !strings.HasPrefix(a, "-"):
			value = false
			continue
		}
		value = false
		switch {
		case a == "--":
			if i+1 < len(c.Args) {
				return "", !c.IsDynamic(i+1) && analysis.IsStdinPath(c.Args[i+1]), !c.IsDynamic(i + 1)
			}
			return "", true, true
		case a == "-" || analysis.IsStdinPath(a):
			return "", true, true
		case !strings.HasPrefix(a, "-"):
			return "", false, true // the program is a file
		case strings.HasPrefix(a, "--"):
			long, _, eq := strings.Cut(a, "=")
			if slices.Contains(strings.Fields(o.long), long) {
				return long, false, true
			}
			value = !eq
		default:
			for j, r := range a[1:] {
				if strings.ContainsRune(o.short, r) {
					return "-" + string(r), false, true
				}
				if strings.ContainsRune(o.other, r) {
					return "", false, true
				}
				if strings.ContainsRune(o.value, r) {
					value = j == len(a)-2 // -W error: the value is the next word
					break
				}
			}
		}
	}
	return "", true, true
}

// interpreterOf is what inlineOpts knows of c's program.
func interpreterOf(c *analysis.Command) (interpreter, bool) {
	name := c.Name
	if analysis.IsPython(name) {
		name = "python"
	}
	o, ok := inlineOpts[name]
	return o, ok
}

// inlineProgram returns the option through which c is given its program on the
// command line ("-c", "-e", "--eval"), or "".
func inlineProgram(c *analysis.Command) string {
	if c.Name == "deno" && c.Sub == "eval" || c.Name == "deno" && len(c.Args) > 0 && c.Args[0] == "eval" {
		return "eval"
	}
	o, ok := interpreterOf(c)
	if !ok {
		return ""
	}
	inline, _, _ := scanInterpreter(c, o)
	return inline
}

// literalStdinProgram reports an interpreter whose program is its standard
// input, given in the line: a here-document, a here-string, or what a pipe
// brings (`python3 <<EOF`, `echo '…' | perl`): a program on the command
// line as much as -c's.
func literalStdinProgram(c *analysis.Command) bool {
	o, ok := interpreterOf(c)
	if !ok {
		return false
	}
	if _, stdin, ok := scanInterpreter(c, o); !ok || !stdin {
		return false
	}
	return stdinFromLine(c)
}

// stdinFromLine reports a standard input the line itself gives c: a pipe
// into it, a here-document or a here-string.
func stdinFromLine(c *analysis.Command) bool {
	if len(c.Feeds) > 0 {
		return true
	}
	for _, r := range c.Redirects {
		if r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" {
			return true
		}
	}
	return false
}

// printsForAnother reports that command i's output is read by another
// command of the line: a later stage of its pipeline, or the command whose
// word holds it in a substitution.
func (x *check) printsForAnother(i int) bool {
	if x.readOn == nil {
		// Once for the line: a line of many echo commands is not scanned
		// once per echo.
		x.readOn = make([]bool, len(x.a.Commands))
		for k := range x.a.Commands {
			for _, j := range x.a.Commands[k].Feeds {
				if j >= 0 && j < len(x.readOn) {
					x.readOn[j] = true
				}
			}
		}
	}
	return x.a.Commands[i].PipedOut || x.readOn[i]
}

// wordsOnly are the programs and builtins that open none of their arguments:
// they print, compare or store them as text, or take them as names.
var wordsOnly = []string{
	":", "basename", "declare", "dirname", "echo", "exit", "export", "expr", "false", "kill", "local", "printf",
	"readonly", "return", "seq", "set", "shift", "sleep", "true", "type", "typeset", "unset", "which", "yes",
}

// recursiveReaders read whole directory trees whatever their options.
var recursiveReaders = map[string]bool{"tar": true, "zip": true, "7z": true, "rg": true, "ag": true, "rsync": true, "scp": true}

// readsTree reports whether c reads the directories it names, all of them.
func readsTree(c *analysis.Command) bool {
	if recursiveReaders[c.Name] || c.Has("r", "R", "recursive") {
		return true
	}
	if c.Name == "find" {
		// What it finds, it hands to a program: the trees it walks are read.
		return slices.ContainsFunc(c.Args, func(a string) bool { return oneOf(a, "-exec", "-execdir", "-ok", "-okdir") })
	}
	for i, a := range c.Args {
		if c.IsDynamic(i) || a == "--" {
			break
		}
		// -a is cp's --archive (recursive); ls -a lists hidden names.
		if a == "--recursive" || a == "--dereference-recursive" || len(a) > 1 && a[0] == '-' && a[1] != '-' && (strings.ContainsAny(a[1:], "rR") || c.Name == "cp" && strings.ContainsRune(a[1:], 'a')) {
			return true
		}
	}
	return false
}

// unconfined asks about c what only a sandbox would contain.
func (x *check) unconfined(c *analysis.Command) {
	if !x.e.s.Unconfined {
		return
	}
	if x.secretAssigns(c) {
		return
	}
	if c.Kind != analysis.Simple || c.Dynamic {
		// What a compound command or a lone redirection reads (`while read
		// l; do …; done < f`, `$(<f)`) is read all the same.
		x.secretRedirects(c)
		return
	}
	if o := inlineProgram(c); o != "" {
		x.ask(RuleExecFlags, "`%s`: %s %s runs a program given on the command line, which shellgate does not analyse, and no sandbox contains it here (rule code-execution). The user must approve it.", c.Source, c.Name, o)
	} else if sqliteProgram(c) {
		x.ask(RuleExecFlags, "`%s`: %s runs the SQL given on its command line, which shellgate does not analyse (readfile, writefile, fsdir, VACUUM INTO and its dot-commands reach any file), and no sandbox contains it here (rule code-execution). The user must approve it.", c.Source, c.Name)
	} else if literalStdinProgram(c) {
		x.ask(RuleExecFlags, "`%s`: %s runs the program given on its standard input, which shellgate does not analyse, and no sandbox contains it here (rule code-execution). The user must approve it.", c.Source, c.Name)
	}
	if what := settingsChange(c); what != "" {
		x.ask(RuleExecFlags, "`%s` %s, outside the project, which later programs obey, and no sandbox gives it a home of its own here (rule code-execution). The user must approve it.", c.Source, what)
	}
	if what := credentialRead(c); what != "" {
		x.ask(RuleSecrets, "`%s` %s, and no sandbox keeps it from the command here (rule secrets). The user must approve it.", c.Source, what)
		return
	}
	if len(x.e.secrets) == 0 {
		return
	}
	if slices.Contains(wordsOnly, c.Name) && !x.printsForAnother(x.cur) {
		// Its arguments are text: echo ~/.ssh/id_rsa prints a name, and
		// echo rm -rf / reads no tree. What it is given to read still is;
		// and a name it prints into a pipe or a substitution may be read
		// there (cat $(echo ~/.ssh/id_rsa)).
		x.secretRedirects(c)
		return
	}
	rec := readsTree(c)
	check := func(p string, f analysis.ArgFlag) bool { return x.secretRead(c, p, f, rec) }
	for i, a := range c.Args {
		var f analysis.ArgFlag
		if i < len(c.Flags) {
			f = c.Flags[i]
		}
		if strings.HasPrefix(a, "-") {
			if _, v, ok := strings.Cut(a, "="); ok {
				a = v // --key=~/.ssh/id_rsa
			} else if len(a) > 2 && a[1] != '-' && strings.ContainsAny(a[2:], "/~") {
				a = a[2:] // -i~/.ssh/id_rsa
			} else {
				continue
			}
		} else if _, v, ok := strings.Cut(a, "="); ok && check(v, f) {
			return // dd if=~/.ssh/id_rsa, KEY=PATH operands
		}
		if check(a, f) {
			return
		}
	}
	x.secretRedirects(c)
	// Files a program text reads: sed's r and R, awk's getline < "file".
	var reads []string
	switch {
	case c.Name == "sed" || c.Name == "gsed":
		for _, s := range sedScriptTargets(c) {
			if s.flag&analysis.ArgDynamic == 0 {
				reads = append(reads, sedReadFiles(s.path)...)
			}
		}
	case c.Name == "awk" || c.Name == "gawk" || c.Name == "mawk" || c.Name == "nawk":
		reads = awkReads(c)
	}
	for _, p := range reads {
		if x.secretRead(c, p, 0, false) {
			return
		}
	}
}

// sqliteShows are sqlite3's dot-commands that only show the database.
var sqliteShows = []string{".tables", ".schema", ".indexes", ".indices", ".databases", ".dbinfo", ".fullschema", ".help", ".show", ".quit", ".exit"}

// sqliteProgram reports SQL given to sqlite3 on its command line (after the
// database, or with -cmd), or on its standard input from the line itself:
// a program as much as python3 -c's, whose functions and dot-commands read
// and write any file (readfile, writefile, fsdir, VACUUM INTO, .cd, .shell,
// its archive mode). Showing the schema is not.
func sqliteProgram(c *analysis.Command) bool {
	if c.Name != "sqlite3" && c.Name != "sqlite" {
		return false
	}
	shows := func(i int) bool {
		return !c.IsDynamic(i) && slices.Contains(sqliteShows, strings.Fields(c.Args[i] + " x")[0])
	}
	db := false
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		switch {
		case c.IsDynamic(i):
			return true
		case strings.HasPrefix(a, "-") && !db:
			switch o := strings.TrimLeft(a, "-"); {
			case o == "cmd":
				if i++; i < len(c.Args) && !shows(i) {
					return true
				}
			case strings.HasPrefix(o, "A") || o == "archive":
				return true // the archive mode extracts and writes files
			case oneOf(o, "init", "separator", "newline", "nullvalue", "maxsize", "mmap", "pagecache", "lookaside", "heap", "vfs", "zip", "readonly-zip", "escape"):
				i++
			}
		case !db:
			db = true
		case !shows(i):
			return true
		}
	}
	return stdinFromLine(c)
}

// secretAssigns asks about a variable or array given a path in a secret
// (f=~/.ssh/id_rsa in a branch, x=(~/.ssh/id_rsa)): what later reads it is
// not always known (a branch that may not run leaves the variable unknown),
// so naming it is asked about, as an argument that names it is.
func (x *check) secretAssigns(c *analysis.Command) bool {
	if len(x.e.secrets) == 0 {
		return false
	}
	for _, a := range c.Assigns {
		vals := []string{a.Value}
		var f analysis.ArgFlag
		if a.Dynamic {
			inner, ok := strings.CutPrefix(a.Value, "(")
			if !ok {
				f = analysis.ArgDynamic // its known part is still looked at
			} else {
				vals = strings.Fields(strings.TrimSuffix(inner, ")")) // an array's words
			}
		}
		for _, v := range vals {
			if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") || strings.HasPrefix(v, "$HOME") || strings.HasPrefix(v, "${HOME}") || strings.HasPrefix(v, `"`) {
				if x.secretRead(c, v, f, false) {
					return true
				}
			}
		}
	}
	return false
}

// secretRedirects asks about a read redirection of c (or a file a program
// text reads, recorded as one) that reaches a secret.
func (x *check) secretRedirects(c *analysis.Command) {
	for _, r := range c.Redirects {
		if r.Write {
			continue // writes are the write rules'
		}
		f := analysis.ArgFlag(0)
		if r.Dynamic {
			f = analysis.ArgDynamic
		}
		if x.secretRead(c, r.Target, f, false) {
			return
		}
	}
}

// secretRead asks about c's read of p, and reports it, when p reaches a
// secret (rec: c reads the trees it names, whole).
func (x *check) secretRead(c *analysis.Command, p string, f analysis.ArgFlag, rec bool) bool {
	if q := strings.Trim(p, `"'`); strings.HasPrefix(q, "/proc/") && strings.HasSuffix(q, "/environ") {
		// Another process's environment (the agent's own: $PPID) holds
		// the tokens it was started with, whatever its PID is written as.
		x.ask(RuleSecrets, "`%s` reads %s, a process's environment, where tokens are kept, and no sandbox hides it here (rule secrets). The user must approve it.", c.Source, p)
		return true
	}
	if name, rest, _ := strings.Cut(p, "/"); len(name) > 1 && name[0] == '~' && !strings.ContainsAny(p, "$`\"'\\*?[{") {
		// ~USER/.ssh: a home by name (the user's own, named), which the
		// shell looks up when it runs.
		if u, err := user.Lookup(name[1:]); err == nil && u.HomeDir != "" {
			p, f = filepath.Join(u.HomeDir, rest), f&^analysis.ArgDynamic
		} else if x.home != "" {
			// A user only NSS knows (LDAP, sssd: a static build reads
			// /etc/passwd alone), whom bash still finds: their home's
			// secrets are judged where the user's own are.
			p, f = filepath.Join(x.home, rest), f&^analysis.ArgDynamic
		}
	}
	if f&analysis.ArgDynamic != 0 {
		// What is known of it, up to its first expansion: a directory in a
		// secret one (cat ~/.ssh/$f) is read from there.
		p = strings.NewReplacer(`"`, "", "'", "").Replace(p)
		for _, h := range []string{"$HOME/", "${HOME}/"} {
			if rest, ok := strings.CutPrefix(p, h); ok && x.home != "" {
				p = x.home + "/" + rest
			}
		}
		if m := homeExpansion().FindStringSubmatch(p); m != nil && x.home != "" {
			// ${HOME:?}/…, ${HOME%/}/…, ${HOME:-x}/…: the home, however
			// the expansion guards or trims it.
			p = x.home + "/" + p[len(m[0]):]
		}
		switch i := strings.IndexAny(p, "$`\\"); {
		case i < 0:
			f = 0 // nothing left unknown: ${HOME:?}/.ssh/id_rsa
		case !strings.Contains(p[:i], "/"):
			return false
		default:
			p, f = p[:strings.LastIndexByte(p[:i], '/')+1]+"x", 0
		}
	}
	if p == "" {
		return false
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok && x.home != "" {
		p = filepath.Join(x.home, rest)
	}
	for _, a := range c.Abs(p) {
		for _, v := range procView(c, a) {
			for _, s := range x.e.secrets {
				var hit bool
				if f&analysis.ArgGlob != 0 {
					hit = globReaches(v, s, rec)
				} else {
					for _, r := range x.resolveView(c, v) {
						hit = hit || within(r, s) || rec && within(s, r)
					}
				}
				if hit {
					x.ask(RuleSecrets, "`%s` reads %s, where credentials are kept (%s), and no sandbox hides them here (rule secrets). The user must approve it; work with the project's files instead.", c.Source, p, s)
					return true
				}
			}
		}
	}
	return false
}

// homeExpansion is a ${HOME…} expansion with an operator, and its slash.
var homeExpansion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$\{HOME[:?%#/=+-][^}]*\}/`) })

// resolveView is where p leads, links followed, for the command: a link
// resolved into /proc/PID/root or /proc/self/cwd (/dev/fd/../root,
// /proc/self/fd/../../self/root: /proc/self is shellgate's own PID when it
// looks) leads on through the command's view (procView).
func (x *check) resolveView(c *analysis.Command, p string) []string {
	out := []string{x.resolve(p)}
	for range 4 {
		var next []string
		for _, r := range out {
			next = append(next, procView(c, r)...)
		}
		if slices.Equal(next, out) {
			break
		}
		out = out[:0]
		for _, n := range next {
			out = append(out, x.resolve(n))
		}
	}
	return out
}

// procView is where a path through /proc's per-process links leads for
// the command that opens it, which an unconfined command shares its root
// with: /proc/self/root/x is /x, /proc/self/cwd/x is x in the command's
// directory. Other paths are themselves.
func procView(c *analysis.Command, p string) []string {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return []string{p}
	}
	pid, rest, _ := strings.Cut(rest, "/")
	if t, ok := strings.CutPrefix(rest, "task/"); ok {
		_, rest, _ = strings.Cut(t, "/")
	}
	link, rest, _ := strings.Cut(rest, "/")
	switch {
	case link == "root" && (pid == "self" || pid == "thread-self" || isNumber(pid)):
		return []string{filepath.Join("/", rest)}
	case link == "cwd" && (pid == "self" || pid == "thread-self"):
		return c.Abs(filepath.Join(".", rest))
	}
	return []string{p}
}

func isNumber(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// globReaches reports whether the glob pattern (absolute, clean) may match
// the secret path s or a path in it, or, for a command that reads whole
// trees (rec), a directory holding it: component by component, with bash's
// rule that a wildcard does not match a leading dot.
func globReaches(pattern, s string, rec bool) bool {
	pc := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	sc := strings.Split(strings.TrimPrefix(s, "/"), "/")
	n := min(len(pc), len(sc))
	if len(pc) < len(sc) && !rec {
		return false
	}
	for i := 0; i < n; i++ {
		if strings.HasPrefix(sc[i], ".") && !strings.HasPrefix(pc[i], ".") && pc[i] != sc[i] {
			return false
		}
		if ok, err := path.Match(pc[i], sc[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

// credentialRead says what c reads from a credential store (a keychain, a
// password manager, git's credential helpers), or "": it prints a secret
// the sandbox never lets a command reach (no keyring, no session bus).
func credentialRead(c *analysis.Command) string {
	sub := subOf(c)
	switch c.Name {
	case "git":
		if c.Sub == "credential" || strings.HasPrefix(c.Sub, "credential-") {
			return "asks git's credential helper for a stored password"
		}
	case "security":
		if strings.HasPrefix(sub, "find-") && strings.HasSuffix(sub, "-password") || sub == "dump-keychain" || sub == "export" {
			return "reads the keychain"
		}
	case "secret-tool":
		if sub == "lookup" || sub == "search" {
			return "reads the keyring"
		}
	case "pass", "gopass":
		if sub == "" || !oneOf(sub, "ls", "list", "find", "search", "grep", "init", "help", "version", "git", "generate", "insert", "edit", "rm", "mv", "cp") {
			return "decrypts a password from the password store"
		}
	case "bw", "lpass", "op", "keyring", "kwallet-query", "vault":
		if oneOf(sub, "get", "show", "read", "export", "item", "kv", "list", "unlock") || c.Name == "kwallet-query" {
			return "reads a password manager or secrets vault"
		}
	}
	return ""
}

// gpgChanges are gpg's commands that change the user's keyring or trust.
var gpgChanges = []string{"--import", "--recv-keys", "--receive-keys", "--fetch-keys", "--refresh-keys", "--lsign-key", "--sign-key",
	"--quick-sign-key", "--quick-lsign-key", "--edit-key", "--delete-key", "--delete-keys", "--delete-secret-key", "--delete-secret-keys",
	"--delete-secret-and-public-key", "--import-ownertrust", "--gen-key", "--generate-key", "--quick-gen-key", "--quick-generate-key",
	"--full-gen-key", "--full-generate-key", "--update-trustdb", "--quick-add-key", "--quick-add-uid", "--quick-revoke-uid",
	"--quick-set-expire", "--change-passphrase", "--passwd", "--import-options"}

// settingsChange says what c changes of the user's (or the system's)
// settings outside any file it names: a keyring, the desktop's settings
// database, default applications, an editor's extensions, the ssh agent's
// keys; or "". A sandbox gives such a command a home of its own, thrown away.
func settingsChange(c *analysis.Command) string {
	sub := subOf(c)
	args := func(set ...string) bool {
		return slices.ContainsFunc(c.Args, func(a string) bool {
			name, _, _ := strings.Cut(a, "=")
			return oneOf(name, set...)
		})
	}
	switch c.Name {
	case "gpg", "gpg2":
		if args(gpgChanges...) {
			return "changes the user's GnuPG keyring or trust"
		}
	case "dconf":
		if oneOf(sub, "write", "load", "reset", "update", "compile") {
			return "changes the desktop's settings database"
		}
	case "gsettings":
		if oneOf(sub, "set", "reset", "reset-recursively") {
			return "changes the desktop's settings"
		}
	case "xdg-mime", "xdg-settings":
		if oneOf(sub, "default", "install", "uninstall", "set") {
			return "changes which programs open files and links"
		}
	case "update-alternatives":
		if args("--set", "--install", "--remove", "--remove-all", "--config", "--auto", "--all", "--set-selections") {
			return "changes which program a system command name runs"
		}
	case "secret-tool":
		if oneOf(sub, "store", "clear") {
			return "changes the user's keyring"
		}
	case "keyctl":
		if oneOf(sub, "add", "padd", "update", "pupdate", "link", "unlink", "newring", "clear", "revoke", "invalidate", "setperm", "timeout", "instantiate", "pinstantiate", "move") {
			return "changes the user's kernel keyrings"
		}
	case "ssh-add":
		if !args("-l", "-L", "-T") || args("-d", "-D", "-x", "-X") {
			return "changes the keys the user's ssh agent holds"
		}
	case "code", "code-insiders", "codium", "cursor", "windsurf":
		if args("--install-extension", "--uninstall-extension") {
			return "changes the editor's extensions, which run when it opens"
		}
	case "defaults":
		if oneOf(sub, "write", "delete", "import", "rename") {
			return "changes the user's preferences"
		}
	case "gh":
		if oneOf(sub, "extension", "ext") && oneOf(operand(c, 1), "install", "upgrade") || sub == "alias" && operand(c, 1) == "set" ||
			sub == "config" && operand(c, 1) == "set" || sub == "auth" && oneOf(operand(c, 1), "setup-git", "login", "logout", "refresh") {
			return "changes gh's settings, aliases or extensions, which later gh commands run"
		}
	}
	return ""
}
