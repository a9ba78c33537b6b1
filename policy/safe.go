package policy

import (
	"strings"

	"github.com/shellgate/shellgate/analysis"
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
	switch c.Name {
	case "git":
		if len(c.Global) > 0 && (hasOpt(c.Global, "c", "exec-path", "config-env") || c.Has("output")) {
			return false
		}
		sub, rest := c.Sub, gitRest(c)
		switch sub {
		case "branch", "tag", "remote", "stash":
			for _, a := range rest {
				if !strings.HasPrefix(a, "-") && a != "list" && a != "show" || a == "-d" || a == "-D" || a == "-m" || a == "-M" || a == "-c" || a == "-C" || a == "--delete" || a == "-f" {
					return false
				}
			}
			return true
		case "config":
			return hasArg(rest, "--get", "--list", "-l", "--get-all", "--get-regexp")
		}
		return gitReadOnly[sub]
	case "go":
		if len(c.Args) == 0 {
			return true
		}
		switch c.Args[0] {
		case "version", "list", "doc":
			return true
		case "env":
			return !hasArg(c.Args, "-w", "-u")
		}
		return false
	case "find":
		return len(findTargets(c)) == 0 && !hasArg(c.Args, "-exec", "-execdir", "-ok", "-okdir")
	case "sed":
		return len(sedTargets(c)) == 0 && !func() bool {
			for _, s := range sedScripts(c) {
				if sedExecutes(s) {
					return true
				}
			}
			return false
		}()
	case "sort":
		return len(c.Values("o", "output")) == 0
	case "tail":
		return !c.Has("f", "F", "follow", "retry")
	case "printf":
		return !hasArg(c.Args, "-v")
	case "command":
		return hasArg(c.Args, "-v", "-V")
	case "env", "timeout", "nice", "time", "xargs":
		return true // what they run is judged as a command of its own
	case "uniq":
		return len(c.Operands) < 2
	}
	return readOnly[c.Name]
}
