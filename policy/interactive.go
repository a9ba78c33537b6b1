package policy

import (
	"slices"
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
)

// interactiveTools need a terminal; the value is what to do instead.
var interactiveTools = names(map[string]string{
	"vim": "edit with sed -i, or write the file with a here-document", "vi": "edit with sed -i, or write the file with a here-document",
	"nvim": "edit with sed -i, or write the file with a here-document", "view": "read with cat or sed -n",
	"vimdiff": "compare with diff -u", "nano": "edit with sed -i, or write the file with a here-document",
	"pico": "edit with sed -i", "joe": "edit with sed -i", "mcedit": "edit with sed -i", "ed": "edit with sed -i",
	"less": "read with cat, head or sed -n", "more": "read with cat, head or sed -n", "most": "read with cat, head or sed -n",
	"top": "use top -b -n 1 or ps aux", "htop": "use ps aux", "btop": "use ps aux", "atop": "use ps aux",
	"watch": "run the command once, or loop with sleep and a bound", "tmux": "run the command directly", "screen": "run the command directly",
	"mc": "use ls, cp and mv", "ranger": "use ls", "nnn": "use ls", "fzf": "filter with grep", "tig": "use git log",
	"lazygit": "use git commands", "telnet": "use a non-interactive client", "ftp": "use a non-interactive client",
	"sftp": "use scp with -B", "crontab": "", "visudo": "", "vipw": "", "passwd": "", "ipython": "run a script with python3 -c or a file",
	"irb": "run ruby -e", "ghci": "run runghc", "psql": "pass the query with -c", "mysql": "pass the query with -e",
	"sqlite3": "pass the SQL as an argument", "gdb": "use gdb -batch", "lldb": "use lldb --batch",
})

// repls start an interactive prompt when given no program.
var repls = names(map[string]string{
	"python": "-c", "python2": "-c", "python3": "-c", "node": "-e", "nodejs": "-e", "ruby": "-e",
	"perl": "-e", "php": "-r", "lua": "-e", "R": "-e", "irb": "", "ghci": "", "ipython": "-c",
	"bash": "-c", "sh": "-c", "zsh": "-c", "dash": "-c", "fish": "-c",
})

func (x *check) interactiveHit(c *analysis.Command, what, instead string) {
	reason := "`" + c.Source + "` " + what + ", and commands run without a terminal (rule interactive)."
	if instead != "" {
		reason += " Instead, " + instead + "."
	}
	if x.terminalJobs {
		reason += " Or run it as a terminal job (tty: true) and answer with job_input."
	}
	x.add(Deny, RuleInteractive, reason)
}

// interactive denies what waits for a terminal or never ends on its own.
func (x *check) interactive(c *analysis.Command) {
	if x.terminal || c.Stored() {
		return
	}
	if _, said := interactiveFacts.first(x, c); said != "" {
		what, instead, _ := strings.Cut(said, "\n")
		x.interactiveHit(c, what, instead)
	}
}

// instead joins what a command does and what to do instead, for
// interactive's facts.
func instead(what, do string) string { return what + "\n" + do }

// interactiveSpecial are the programs whose options decide whether they need
// a terminal; the rest of interactiveTools always do.
var interactiveSpecial = []string{"emacs", "top", "man", "tail", "journalctl", "dmesg", "crontab", "ssh", "git", "gdb", "lldb", "psql", "mysql", "sqlite3"}

// interactiveFacts are the programs that wait for a terminal, and when.
var interactiveFacts = &catalogue{facts: []fact{
	fact{programs: []string{"emacs"},
		test: func(_ *check, c *analysis.Command) string {
			// Single-dash long options (emacs -batch) are not bundles.
			return when(!c.Has("batch", "script", "version") && !hasArg(c.Args, "-batch", "-script"),
				instead("opens an editor", "edit with sed -i, or use emacs --batch"))
		},
		match: []string{"emacs x.txt", "emacs -nw"}, notMatch: []string{"emacs --batch -l x.el", "emacs -batch x"}},
	fact{programs: []string{"top"},
		test: func(_ *check, c *analysis.Command) string {
			return when(!c.Has("b", "version"), instead("is a full-screen monitor", "use top -b -n 1 or ps aux"))
		},
		match: []string{"top", "top -d 1"}, notMatch: []string{"top -b -n 1", "top -bn1"}},
	fact{programs: []string{"man"},
		test: func(_ *check, c *analysis.Command) string {
			return when(!c.PipedOut && !c.Has("P", "pager", "H", "html", "f", "k", "w", "where", "path", "location", "whatis", "apropos", "help", "version"),
				instead("opens a pager", "use `man -P cat "+strings.Join(c.Args, " ")+"`"))
		},
		match: []string{"man ls", "man 5 crontab"}, notMatch: []string{"man ls | cat", "man -P cat ls", "man -k socket"}},
	fact{programs: []string{"tail"},
		test: func(_ *check, c *analysis.Command) string {
			return when(c.Has("f", "F", "follow", "retry"), instead("follows the file forever", "read the end once with tail -n 100"))
		},
		match: []string{"tail -f log", "tail --follow=name log", "tail -n5 -F log"}, notMatch: []string{"tail -n 5 log", "tail log"}},
	fact{programs: []string{"journalctl", "dmesg"},
		test: func(_ *check, c *analysis.Command) string {
			// dmesg -f is --facility; it follows with -w/-W.
			follows := c.Name == "journalctl" && c.Has("f", "follow") || c.Name == "dmesg" && c.Has("w", "W", "follow", "follow-new")
			return when(follows, instead("follows the log forever", "read it once with -n 100"))
		},
		match: []string{"journalctl -f", "dmesg -w", "journalctl -u x --follow"}, notMatch: []string{"journalctl -n 100", "dmesg -f kern"}},
	fact{programs: []string{"crontab"},
		test:  func(_ *check, c *analysis.Command) string { return when(c.Has("e"), instead("opens an editor", "")) },
		match: []string{"crontab -e"}, notMatch: []string{"crontab -l"}},
	fact{programs: []string{"ssh"},
		test: func(_ *check, c *analysis.Command) string {
			return when(!infoOnly(c) && sshCommandless(c), instead("opens an interactive remote shell", "pass the remote command as an argument"))
		},
		match: []string{"ssh host", "ssh -p 22 user@host"}, notMatch: []string{"ssh host uptime", "ssh -V"}},
	fact{programs: []string{"git"}, test: gitInteractive,
		match: []string{"git add -p", "git rebase -i HEAD~2", "git commit", "git commit --patch", "git stash -p", "git clean -i",
			"git mergetool", "git difftool HEAD~1", "git checkout -p x", "git rebase --edit-todo", "GIT_SEQUENCE_EDITOR=true git commit"},
		notMatch: []string{"git add x", "git commit -m msg", "GIT_EDITOR=true git commit", "git stash show -p", "git clean -fd",
			"git difftool -y HEAD~1", "git rebase main", "GIT_SEQUENCE_EDITOR=true git rebase -i HEAD~2", "git -c core.editor=true rebase -i main"}},
	fact{programs: []string{"gdb", "lldb"},
		test: func(_ *check, c *analysis.Command) string {
			once := c.Has("batch", "batch-silent", "version", "help", "configuration")
			if c.Name == "lldb" {
				once = c.Has("batch", "b", "version", "v", "help", "h")
			}
			return when(!once, instead("starts a debugger prompt", interactiveTools[c.Name]))
		},
		match:    []string{"gdb ./a.out", "lldb ./a.out", "gdb -q ./a.out", "lldb -x ./a"},
		notMatch: []string{"gdb -batch -ex bt ./a.out", "lldb --batch ./a", "gdb --version", "lldb -b -o bt ./a", "gdb --batch-silent ./a", "gdb -batc ./a"}},
	fact{programs: []string{"psql", "mysql", "sqlite3"},
		test: func(x *check, c *analysis.Command) string {
			name, has := c.Name, c.Has
			prompt := len(c.Args) == 0 || name == "psql" && !has("c", "f", "command", "file", "l", "list") ||
				name == "mysql" && !has("e", "execute") || name == "sqlite3" && countOperands(c) < 2
			return when(prompt && !x.hasStdin(c) && !infoOnly(c), instead("opens an interactive prompt", interactiveTools[name]))
		},
		match: []string{"psql", "mysql -u root db", "sqlite3 x.db"}, notMatch: []string{"psql -c 'select 1'", "sqlite3 x.db .tables", "mysql db < dump.sql"}},
	fact{listed: func(n string) bool { return has(interactiveTools, n) && !slices.Contains(interactiveSpecial, n) },
		test: func(_ *check, c *analysis.Command) string {
			if c.Name == "fzf" && c.Has("f", "filter", "bash", "zsh", "fish", "version", "help") {
				return "" // filters once, or prints its shell integration
			}
			return when(!infoOnly(c), instead("needs a terminal", interactiveTools[c.Name]))
		},
		match: []string{"vim x", "less README.md", "htop", "fzf", "watch ls"}, notMatch: []string{"vim --version", "fzf -f x", "nano --help"}},
	fact{listed: func(n string) bool { return has(repls, n) && !has(interactiveTools, n) },
		also:     func(n string) bool { return strings.HasPrefix(n, "python3.") && repls[n] == "" },
		test:     replPrompt,
		match:    []string{"python3", "node", "bash", "python3.12", "python3 -i x.py"},
		notMatch: []string{"python3 x.py", "node -e 1", "bash -c true", "echo 1 | python3", "bash -i x.sh", "python3 --version", "node -v", "perl -v"}},
}}

// replPrompt: an interpreter given no program, or asked for a prompt (-i).
func replPrompt(x *check, c *analysis.Command) string {
	flag, ok := repls[c.Name]
	if !ok {
		flag = "-c"
	}
	has := c.Has
	// -v prints the version and exits in node, perl and php (in python it
	// is verbose, and ruby then reads its program).
	version := has("v") && (c.Name == "node" || c.Name == "nodejs" || c.Name == "perl" || c.Name == "php")
	prompt := countOperands(c) == 0 && !x.hasStdin(c) && !version && !has("c", "e", "m", "r", "eval", "p", "print", "version", "V", "help", "h") ||
		has("i") && c.Name != "bash" && c.Name != "sh" && c.Name != "perl" && c.Name != "ruby"
	return when(prompt, instead("starts an interactive prompt", "pass the program with "+flag+" or run a file"))
}

// hasStdin reports whether a command's standard input comes from a pipe, a
// file or a here-document rather than a terminal.
func (x *check) hasStdin(c *analysis.Command) bool {
	if len(c.Feeds) > 0 {
		return true
	}
	for _, r := range c.Redirects {
		if r.Op == "<" || r.Op == "<<" || r.Op == "<<-" || r.Op == "<<<" || r.Op == "0<" || r.Op == "<>" {
			return true
		}
	}
	return false
}

// countOperands counts the arguments that are not options.
func countOperands(c *analysis.Command) int {
	n := 0
	for _, a := range c.Args {
		if !strings.HasPrefix(a, "-") || a == "-" {
			n++
		}
	}
	return n
}

// sshCommandless reports ssh HOST with no remote command.
func sshCommandless(c *analysis.Command) bool { return len(c.Operands) <= 1 }

// gitInteractive: git subcommands that open an editor, a hunk picker or a
// merge tool.
func gitInteractive(_ *check, c *analysis.Command) string {
	sub, has := c.Sub, c.Has
	switch sub {
	case "add":
		return when(has("i", "p", "e", "interactive", "patch", "edit"),
			instead("opens an interactive hunk picker", "add whole files with git add PATH, or apply a prepared patch with git apply --cached"))
	case "rebase":
		// The plan's editor is GIT_SEQUENCE_EDITOR, else git's editor: one
		// given on the line edits without a person (its value is checked as
		// a command of its own, so GIT_SEQUENCE_EDITOR=vim is still denied).
		return when(has("i", "interactive", "edit-todo") && !editorGiven(c, "GIT_SEQUENCE_EDITOR", "sequence.editor", "GIT_EDITOR", "core.editor"),
			instead("opens an editor on the rebase plan", "use a non-interactive rebase, or GIT_SEQUENCE_EDITOR with a sed script: `GIT_SEQUENCE_EDITOR='sed -i 2s/^pick/fixup/' git rebase -i HEAD~2`"))
	case "commit":
		if has("p", "patch", "interactive") {
			return instead("opens an interactive hunk picker", "stage files with git add, then git commit -m")
		}
		return when(!has("m", "F", "C", "message", "file", "reuse-message", "no-edit", "fixup", "dry-run") && !editorGiven(c, "GIT_EDITOR", "core.editor"),
			instead("opens an editor for the message", "pass the message with -m"))
	case "checkout", "reset", "stash", "restore":
		if sub == "stash" && len(c.Operands) > 0 && subOf(c) != "push" && subOf(c) != "save" {
			return "" // git stash show -p prints a patch
		}
		return when(has("p", "patch"), instead("opens an interactive hunk picker", "name the paths instead"))
	case "clean":
		return when(has("i", "interactive"), instead("asks interactively", "use git clean -n to list, then -f with paths"))
	case "mergetool":
		return instead("opens a merge tool", "resolve conflicts by editing files, then git add")
	case "difftool":
		return when(!has("y", "no-prompt", "x", "extcmd", "t", "tool"), instead("prompts before each file", "use git diff"))
	}
	return ""
}

func assigns(c *analysis.Command, name string) bool {
	for _, a := range c.Assigns {
		if a.Name == name {
			return true
		}
	}
	return false
}

// editorGiven reports whether the command line gives git its editor: names
// are environment variables (GIT_EDITOR) and git config keys (core.editor),
// set by an assignment before git or by git -c.
func editorGiven(c *analysis.Command, names ...string) bool {
	if slices.ContainsFunc(c.Assigns, func(a analysis.Assignment) bool { return slices.Contains(names, a.Name) }) {
		return true
	}
	for _, o := range c.Global {
		key, _, _ := strings.Cut(o.Value, "=")
		if o.Name == "c" && o.HasValue && slices.Contains(names, strings.ToLower(key)) {
			return true
		}
	}
	return false
}
