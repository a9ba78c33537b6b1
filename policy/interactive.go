package policy

import (
	"strings"

	"github.com/shellgate/shellgate/analysis"
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
	reason += " Or run it as a terminal job (tty: true) and answer with job_input."
	x.add(Deny, RuleInteractive, reason)
}

// interactive denies what waits for a terminal or never ends on its own.
func (x *check) interactive(c *analysis.Command) {
	if x.terminal {
		return
	}
	name := c.Name
	has := c.Has
	// Single-dash long options (gdb -batch, emacs -batch) are not bundles.
	word := func(ws ...string) bool { return hasArg(c.Args, ws...) }
	switch name {
	case "emacs":
		if !has("batch", "script", "version") && !word("-batch", "-script") {
			x.interactiveHit(c, "opens an editor", "edit with sed -i, or use emacs --batch")
		}
		return
	case "top":
		if !has("b", "version") {
			x.interactiveHit(c, "is a full-screen monitor", "use top -b -n 1 or ps aux")
		}
		return
	case "man":
		if !c.PipedOut && !has("P", "pager", "H", "html", "f", "k", "w", "where", "path", "location", "whatis", "apropos", "help", "version") {
			x.interactiveHit(c, "opens a pager", "use `man -P cat "+strings.Join(c.Args, " ")+"`")
		}
		return
	case "tail":
		if has("f", "F", "follow", "retry") {
			x.interactiveHit(c, "follows the file forever", "read the end once with tail -n 100")
		}
		return
	case "journalctl", "dmesg":
		// dmesg -f is --facility; it follows with -w/-W.
		if name == "journalctl" && has("f", "follow") || name == "dmesg" && has("w", "W", "follow", "follow-new") {
			x.interactiveHit(c, "follows the log forever", "read it once with -n 100")
		}
		return
	case "crontab":
		if has("e") {
			x.interactiveHit(c, "opens an editor", "")
		}
		return
	case "ssh":
		if !infoOnly(c) && sshCommandless(c) {
			x.interactiveHit(c, "opens an interactive remote shell", "pass the remote command as an argument")
		}
		return
	case "git":
		x.gitInteractive(c)
		return
	case "gdb", "lldb":
		if !has("batch", "version", "v") && !word("-batch", "-version") {
			x.interactiveHit(c, "starts a debugger prompt", interactiveTools[name])
		}
		return
	case "psql", "mysql", "sqlite3":
		if len(c.Args) == 0 || name == "psql" && !has("c", "f", "command", "file", "l", "list") ||
			name == "mysql" && !has("e", "execute") || name == "sqlite3" && countOperands(c) < 2 {
			if !x.hasStdin(c) && !infoOnly(c) {
				x.interactiveHit(c, "opens an interactive prompt", interactiveTools[name])
			}
		}
		return
	}
	if instead, ok := interactiveTools[name]; ok {
		if name == "fzf" && has("f", "filter", "bash", "zsh", "fish", "version", "help") {
			return // filters once, or prints its shell integration
		}
		if !infoOnly(c) {
			x.interactiveHit(c, "needs a terminal", instead)
		}
		return
	}
	if flag, ok := repls[name]; ok || strings.HasPrefix(name, "python3.") {
		if !ok {
			flag = "-c"
		}
		if countOperands(c) == 0 && !x.hasStdin(c) && !has("c", "e", "m", "r", "eval", "p", "print", "version", "V", "help", "h") ||
			has("i") && name != "bash" && name != "sh" && name != "perl" && name != "ruby" {
			x.interactiveHit(c, "starts an interactive prompt", "pass the program with "+flag+" or run a file")
		}
	}
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

func (x *check) gitInteractive(c *analysis.Command) {
	sub, has := c.Sub, c.Has
	switch sub {
	case "add":
		if has("i", "p", "e", "interactive", "patch", "edit") {
			x.interactiveHit(c, "opens an interactive hunk picker", "add whole files with git add PATH, or apply a prepared patch with git apply --cached")
		}
	case "rebase":
		if has("i", "interactive", "edit-todo") {
			x.interactiveHit(c, "opens an editor on the rebase plan", "use a non-interactive rebase, or GIT_SEQUENCE_EDITOR with a sed script")
		}
	case "commit":
		if has("p", "patch", "interactive") {
			x.interactiveHit(c, "opens an interactive hunk picker", "stage files with git add, then git commit -m")
			return
		}
		if !has("m", "F", "C", "message", "file", "reuse-message", "no-edit", "fixup", "dry-run") && !assigns(c, "GIT_EDITOR") {
			x.interactiveHit(c, "opens an editor for the message", "pass the message with -m")
		}
	case "checkout", "reset", "stash", "restore":
		if sub == "stash" && len(c.Operands) > 0 && c.Args[c.Operands[0]] != "push" && c.Args[c.Operands[0]] != "save" {
			return // git stash show -p prints a patch
		}
		if has("p", "patch") {
			x.interactiveHit(c, "opens an interactive hunk picker", "name the paths instead")
		}
	case "clean":
		if has("i", "interactive") {
			x.interactiveHit(c, "asks interactively", "use git clean -n to list, then -f with paths")
		}
	case "mergetool":
		x.interactiveHit(c, "opens a merge tool", "resolve conflicts by editing files, then git add")
	case "difftool":
		if !has("y", "no-prompt", "x", "extcmd", "t", "tool") {
			x.interactiveHit(c, "prompts before each file", "use git diff")
		}
	}
}

func assigns(c *analysis.Command, name string) bool {
	for _, a := range c.Assigns {
		if a.Name == name {
			return true
		}
	}
	return false
}
