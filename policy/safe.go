package policy

import (
	"slices"
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
)

// readOnly are commands that only read, whatever their arguments, unless an
// argument check below says otherwise.
var readOnly = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "wc": true, "echo": true, "printf": true,
	"pwd": true, "true": true, "false": true, "test": true, "[": true, "which": true, "type": true,
	"basename": true, "dirname": true, "realpath": true, "readlink": true, "stat": true, "file": true,
	"du": true, "df": true, "date": true, "id": true, "whoami": true, "uname": true, "printenv": true,
	"grep": true, "egrep": true, "fgrep": true, "rg": true, "find": true, "sort": true, "uniq": true,
	"cut": true, "tr": true, "nl": true, "tac": true, "rev": true, "column": true, "jq": true,
	"diff": true, "cmp": true, "comm": true, "tree": true, "seq": true, "sleep": true, "expr": true,
	"md5sum": true, "sha1sum": true, "sha256sum": true, "sha512sum": true, "xxd": true, "od": true,
	"hexdump": true, "strings": true, "sed": true, "cd": true, "pushd": true, "popd": true, ":": true,
	"exit": true, "set": true, "shopt": true, "export": true, "local": true, "declare": true,
	"readonly": true, "typeset": true, "read": true, "wait": true, "env": true, "command": true,
	"timeout": true, "nice": true, "time": true, "xargs": true, "paste": true, "join": true, "fold": true,
	"fmt": true, "base64": true, "ps": true, "hostname": true, "getconf": true, "locale": true,
}

// gitReadOnly are git subcommands that only read.
var gitReadOnly = map[string]bool{
	"status": true, "diff": true, "log": true, "show": true, "ls-files": true, "ls-tree": true,
	"rev-parse": true, "blame": true, "describe": true, "shortlog": true, "cat-file": true, "grep": true,
	"show-ref": true, "for-each-ref": true, "merge-base": true, "rev-list": true, "whatchanged": true,
	"version": true, "reflog": true, "name-rev": true, "check-ignore": true, "check-attr": true,
}

// safe reports a command that untrusted mode runs without asking.
func safe(c *analysis.Command) bool {
	for _, r := range c.Redirects {
		if r.Write && !isHarmlessTarget(r.Target) {
			return false
		}
	}
	if c.Kind == analysis.Assign || c.Kind == analysis.Redirs {
		return true
	}
	if c.Dynamic || len(c.ExecOpts) > 0 {
		return false
	}
	if safeFacts.names(c.Name) {
		f, _ := safeFacts.first(nil, c)
		return f != nil
	}
	return readOnly[c.Name]
}

// safeFacts are the programs that only read with some arguments and not
// others; a program here is safe only when its fact holds.
var safeFacts = &catalogue{facts: []fact{
	fact{programs: []string{"git"}, test: gitSafe,
		match:    []string{"git status", "git log -p", "git branch -a", "git config --get user.name", "git stash list", "git remote -v"},
		notMatch: []string{"git commit -m x", "git -c core.pager=x log", "git branch -D x", "git config user.name x", "git stash drop", "git -C . log --output=x"}},
	fact{programs: []string{"go"},
		test: func(_ *check, c *analysis.Command) string {
			ok := len(c.Args) == 0 || oneOf(c.Args[0], "version", "list", "doc") || c.Args[0] == "env" && !hasArg(c.Args, "-w", "-u")
			return when(ok, "reads")
		},
		match: []string{"go version", "go list ./...", "go env GOPATH"}, notMatch: []string{"go build ./...", "go env -w X=1"}},
	fact{programs: []string{"find"},
		test: func(_ *check, c *analysis.Command) string {
			return when(len(findTargets(c)) == 0 && !hasArg(c.Args, "-exec", "-execdir", "-ok", "-okdir"), "reads")
		},
		match: []string{"find . -name '*.go'"}, notMatch: []string{"find . -delete", "find . -fprint out", "find . -exec ls {} +"}},
	fact{programs: []string{"sed"},
		test: func(_ *check, c *analysis.Command) string {
			return when(len(sedTargets(c)) == 0 && !slices.ContainsFunc(sedScripts(c), sedExecutes), "reads")
		},
		match: []string{"sed -n 1,5p x", "sed s/a/b/ x"}, notMatch: []string{"sed -i s/a/b/ x", "sed 's/a/b/w out' x", "sed 1e x"}},
	fact{programs: []string{"sort"},
		test:  func(_ *check, c *analysis.Command) string { return when(len(c.Values("o", "output")) == 0, "reads") },
		match: []string{"sort -u x"}, notMatch: []string{"sort -o x x", "sort --output=y x"}},
	fact{programs: []string{"tail"},
		test:  func(_ *check, c *analysis.Command) string { return when(!c.Has("f", "F", "follow", "retry"), "reads") },
		match: []string{"tail -n 5 x"}, notMatch: []string{"tail -f x"}},
	fact{programs: []string{"printf"},
		test:  func(_ *check, c *analysis.Command) string { return when(!hasArg(c.Args, "-v"), "reads") },
		match: []string{"printf '%s\\n' x"}, notMatch: []string{"printf -v PATH /tmp"}},
	fact{programs: []string{"command"},
		test:  func(_ *check, c *analysis.Command) string { return when(hasArg(c.Args, "-v", "-V"), "reads") },
		match: []string{"command -v git"}, notMatch: []string{"command rm x"}},
	fact{programs: []string{"env", "timeout", "nice", "time", "xargs"},
		// What they run is judged as a command of its own.
		test:  func(*check, *analysis.Command) string { return "runs what is judged on its own" },
		match: []string{"env FOO=1 ls", "timeout 5 ls"}, notMatch: []string{"nohup ls"}},
	fact{programs: []string{"uniq"},
		test:  func(_ *check, c *analysis.Command) string { return when(len(c.Operands) < 2, "reads") },
		match: []string{"uniq -c x"}, notMatch: []string{"uniq x out"}},
}}

// gitSafe: git subcommands that only read, and branch, tag, remote and stash
// when they list.
func gitSafe(_ *check, c *analysis.Command) string {
	if len(c.Global) > 0 && (hasOpt(c.Global, "c", "exec-path", "config-env") || c.Has("output")) {
		return ""
	}
	rest := gitRest(c)
	switch c.Sub {
	case "branch", "tag", "remote", "stash":
		for _, a := range rest {
			if !strings.HasPrefix(a, "-") && a != "list" && a != "show" || oneOf(a, "-d", "-D", "-m", "-M", "-c", "-C", "--delete", "-f") {
				return ""
			}
		}
		return "lists"
	case "config":
		return when(hasArg(rest, "--get", "--list", "-l", "--get-all", "--get-regexp"), "reads")
	}
	return when(gitReadOnly[c.Sub], "reads")
}
