package policy

import (
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
)

// shellFamily is how the policy reads a command line, from the program that
// will run it: bash syntax for bash and POSIX shells, a conservative reader
// of its own for PowerShell and cmd.exe, and nothing for zsh and fish.
type shellFamily int

const (
	familyBash shellFamily = iota
	familyPowerShell
	familyCmd
	familyOther // zsh, fish: bash's reading of them is not theirs
)

func familyOf(program string) shellFamily {
	name := strings.ToLower(program[strings.LastIndexAny(program, `/\`)+1:])
	name = strings.TrimSuffix(name, ".exe")
	switch {
	case name == "pwsh" || name == "powershell" || strings.HasPrefix(name, "pwsh-"):
		return familyPowerShell
	case name == "cmd":
		return familyCmd
	case name == "zsh" || name == "fish" || name == "nu" || name == "xonsh" || name == "elvish" || name == "csh" || name == "tcsh":
		return familyOther
	}
	return familyBash
}

// readOnlyWindows are PowerShell cmdlets, their aliases and cmd.exe builtins
// that only read or print (lower case).
var readOnlyWindows = map[string]bool{
	"dir": true, "ls": true, "gci": true, "get-childitem": true, "get-content": true, "gc": true, "cat": true, "type": true,
	"select-string": true, "sls": true, "get-location": true, "gl": true, "pwd": true, "echo": true, "write-output": true,
	"write-host": true, "where": true, "where.exe": true, "get-command": true, "gcm": true, "get-item": true, "gi": true,
	"get-itemproperty": true, "test-path": true, "resolve-path": true, "get-date": true, "get-process": true, "gps": true,
	"get-help": true, "measure-object": true, "measure": true, "select-object": true, "select": true, "sort-object": true,
	"sort": true, "format-table": true, "ft": true, "format-list": true, "fl": true, "out-string": true, "findstr": true,
	"find": true, "more": true, "ver": true, "hostname": true, "whoami": true, "get-filehash": true, "tree": true,
	"vol": true, "cd": true, "chdir": true, "sl": true, "set-location": true,
}

// readOnlyGitWindows are git subcommands that a Windows line may run without asking.
var readOnlyGitWindows = map[string]bool{"status": true, "log": true, "diff": true, "show": true, "branch": true, "rev-parse": true, "ls-files": true}

// otherShell judges a command line for PowerShell, cmd.exe or a shell whose
// syntax bash does not share. It returns false when the bash analysis applies.
func (x *check) otherShell(command string, f shellFamily) bool {
	if f == familyBash {
		return false
	}
	x.a = &analysis.Analysis{Commands: []analysis.Command{{Name: "", Source: command, Args: []string{}, Pos: analysis.Pos{Line: 1, Col: 1}}}}
	x.cur = 0
	name := map[shellFamily]string{familyPowerShell: "PowerShell", familyCmd: "cmd.exe", familyOther: "this shell"}[f]
	if f == familyOther {
		x.ask(RuleOtherShell, "`%s` runs in a shell whose syntax shellgate does not analyse (rule other-shell): the user must approve it.", command)
		return true
	}
	lower := strings.ToLower(command)
	if why := windowsCatastrophic(lower); why != "" {
		x.deny(RuleCatastrophic, "`%s` %s (rule catastrophic). Delete or change specific paths inside the project instead.", command, why)
		return true
	}
	if p := windowsDeleteOutside(lower, x.root); p != "" {
		x.deny(RuleConfinement, "`%s` would delete %s, which is outside the project root %s (rule confinement). Delete paths inside the project.", command, p, x.root)
		return true
	}
	if (strings.Contains(lower, "iex") || strings.Contains(lower, "invoke-expression")) &&
		containsAny(lower, "invoke-webrequest", "iwr", "invoke-restmethod", "irm", "downloadstring", "net.webclient", "curl", "wget") {
		x.deny(RuleRemoteCode, "`%s` runs code fetched from the network (rule remote-code). Download the file, let the user review it, then run it from the project.", command)
		return true
	}
	if why := windowsNotReadOnly(lower, f); why != "" {
		x.ask(RuleOtherShell, "`%s`: %s, and shellgate reads %s lines conservatively: only single read-only commands with literal arguments run without asking (rule other-shell). The user must approve it.", command, why, name)
	}
	return true
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// windowsCatastrophic names the PowerShell and cmd.exe forms that destroy a
// disk or the system.
func windowsCatastrophic(l string) string {
	words := strings.Fields(l)
	if len(words) == 0 {
		return ""
	}
	switch strings.TrimSuffix(words[0], ".exe") {
	case "format-volume", "clear-disk", "initialize-disk", "diskpart", "format", "stop-computer", "restart-computer", "shutdown", "remove-partition":
		return "would format a disk or stop the machine"
	}
	recursive := containsAny(l, " -recurse", " -r ", " /s")
	deleting := containsAny(" "+words[0], " remove-item", " ri", " rm", " del", " erase", " rd", " rmdir", " rimraf")
	if recursive && deleting {
		for _, w := range words[1:] {
			w = strings.Trim(w, `"'`)
			if len(w) >= 2 && w[1] == ':' && (len(w) == 2 || len(w) == 3 && (w[2] == '\\' || w[2] == '/')) ||
				w == `\` || w == "/" || w == "~" || w == "$home" || w == "$env:userprofile" || w == "%userprofile%" ||
				w == `c:\windows` || w == `c:\users` || w == "$env:systemroot" || w == "%systemroot%" {
				return "would delete a whole drive, the home directory or the system"
			}
		}
	}
	return ""
}

// windowsDeleteOutside returns an absolute path outside root that a deleting
// command (Remove-Item, rm, del, rd …) names, or "". Paths compare without
// case and with either slash, as Windows does.
func windowsDeleteOutside(l, root string) string {
	words := strings.Fields(l)
	if len(words) < 2 || !containsAny(" "+strings.TrimSuffix(words[0], ".exe")+" ", " remove-item ", " ri ", " rm ", " del ", " erase ", " rd ", " rmdir ", " move-item ", " mi ", " move ") {
		return ""
	}
	norm := func(p string) string {
		return strings.TrimSuffix(strings.ReplaceAll(strings.ToLower(p), `\`, "/"), "/")
	}
	r := norm(root)
	for _, w := range words[1:] {
		w = strings.Trim(w, `"',`)
		abs := len(w) > 2 && w[1] == ':' && (w[2] == '\\' || w[2] == '/') || strings.HasPrefix(w, `\\`) || strings.HasPrefix(w, "/")
		if !abs {
			continue
		}
		if p := norm(w); p != r && !strings.HasPrefix(p, r+"/") {
			return w
		}
	}
	return ""
}

// windowsNotReadOnly says why a line is not one read-only command with
// literal arguments, or "" when it is.
func windowsNotReadOnly(l string, f shellFamily) string {
	for _, op := range []string{";", "&", ">", "<", "$(", "@(", "{", "}", "`", "^", "%", "$", "\n", "\r"} {
		if strings.Contains(stripQuoted(l), op) {
			return "it uses " + strings.TrimSpace(op) + ", which can chain, redirect or compute commands"
		}
	}
	for _, seg := range strings.Split(l, "|") {
		words := strings.Fields(seg)
		if len(words) == 0 {
			return "it has an empty pipeline stage"
		}
		name := strings.Trim(words[0], `"'`)
		if name == "git" && len(words) > 1 && readOnlyGitWindows[words[1]] {
			continue
		}
		if !readOnlyWindows[name] || f == familyCmd && strings.HasPrefix(name, "get-") {
			return name + " is not in the read-only set"
		}
	}
	return ""
}

// stripQuoted removes the text inside single quotes (literal in PowerShell)
// so that a quoted ; or $ does not count; double quotes expand in PowerShell,
// so they are kept.
func stripQuoted(l string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(l); i++ {
		if l[i] == '\'' {
			in = !in
			continue
		}
		if !in {
			b.WriteByte(l[i])
		}
	}
	return b.String()
}
