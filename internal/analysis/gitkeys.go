package analysis

import "strings"

// GitKeyKind is what git does with the value of a config key.
type GitKeyKind uint8

const (
	// GitRuns: git runs the value as a command (core.pager, alias.x=!cmd).
	GitRuns GitKeyKind = 1 << iota
	// GitRedirects: the value points git at hooks, config or a work tree to
	// use from elsewhere, or lets a transport run commands (core.hooksPath,
	// include.path, protocol.ext.allow=always).
	GitRedirects
	// GitRemote: the value points git at a remote (remote.x.url,
	// url.x.insteadOf, http.proxy).
	GitRemote
)

// subPart says whether a git key has a subsection (diff.<driver>.textconv).
type subPart uint8

const (
	anySub  subPart = iota // with or without one
	noSub                  // section.name only
	someSub                // section.<sub>.name only
)

// gitKey is one entry of gitKeys: keys of section whose last part is name
// ("*": any, "+": any after a dot; "*cmd": ending in cmd), with a subsection as sub says, are of
// kind when value (as written) satisfies when (nil: whatever it is). match and
// notMatch are KEY=VALUE examples TestGitKeyExamples checks.
type gitKey struct {
	section, name   string
	sub             subPart
	kind            GitKeyKind
	when            func(val string) bool
	match, notMatch []string
}

// gitKeys is the one table of what git does with config values: the
// analysis follows the commands of GitRuns keys, and the policy asks about
// GitRuns and GitRedirects keys and denies GitRemote ones with the network
// off. (internal/protect reads the paths core.hooksPath, core.fsmonitor and
// include(If).path name in the root's own config: entries here too.)
var gitKeys = []gitKey{
	{section: "alias", name: "*", kind: GitRuns, when: bang, match: []string{"alias.x=!rm -rf ~"}, notMatch: []string{"alias.st=status"}},
	{section: "core", name: "fsmonitor", kind: GitRuns, when: notBool, match: []string{"core.fsmonitor=./x.sh"}, notMatch: []string{"core.fsmonitor=true"}},
	{section: "core", name: "pager", kind: GitRuns, match: []string{"core.pager=less"}, notMatch: []string{"core.pagerx=less"}},
	{section: "core", name: "sshcommand", kind: GitRuns, match: []string{"core.sshCommand=ssh -i k"}},
	{section: "core", name: "editor", kind: GitRuns, match: []string{"core.editor=vim"}},
	{section: "core", name: "askpass", kind: GitRuns, match: []string{"core.askPass=./p"}},
	{section: "core", name: "gitproxy", kind: GitRuns, match: []string{"core.gitProxy=./p"}},
	{section: "core", name: "alternaterefscommand", kind: GitRuns, match: []string{"core.alternateRefsCommand=./p"}},
	{section: "sequence", name: "editor", kind: GitRuns, match: []string{"sequence.editor=sed -i x"}},
	{section: "diff", name: "external", kind: GitRuns, match: []string{"diff.external=./d"}},
	{section: "diff", name: "textconv", sub: someSub, kind: GitRuns, match: []string{"diff.pdf.textconv=./t"}, notMatch: []string{"diff.textconv=./t"}},
	{section: "diff", name: "command", sub: someSub, kind: GitRuns, match: []string{"diff.x.command=./t"}},
	{section: "difftool", name: "cmd", kind: GitRuns, match: []string{"difftool.x.cmd=./t"}},
	{section: "mergetool", name: "cmd", kind: GitRuns, match: []string{"mergetool.x.cmd=./t"}},
	{section: "browser", name: "cmd", kind: GitRuns, match: []string{"browser.x.cmd=./t"}},
	{section: "man", name: "cmd", kind: GitRuns, match: []string{"man.x.cmd=./t"}, notMatch: []string{"man.viewer=x"}},
	{section: "merge", name: "driver", sub: someSub, kind: GitRuns, match: []string{"merge.x.driver=./m %A"}, notMatch: []string{"merge.ff=only"}},
	{section: "filter", name: "clean", kind: GitRuns, match: []string{"filter.lfs.clean=./c"}},
	{section: "filter", name: "smudge", kind: GitRuns, match: []string{"filter.lfs.smudge=./c"}},
	{section: "filter", name: "process", kind: GitRuns, match: []string{"filter.lfs.process=./c"}, notMatch: []string{"filter.lfs.required=true"}},
	{section: "pager", name: "*", kind: GitRuns, when: notBool, match: []string{"pager.log=./p"}, notMatch: []string{"pager.log=false"}},
	{section: "credential", name: "helper", kind: GitRuns, when: bang, match: []string{"credential.helper=!./h"}, notMatch: []string{"credential.helper=store"}},
	{section: "gpg", name: "program", kind: GitRuns, match: []string{"gpg.program=./g", "gpg.ssh.program=./g"}},
	{section: "uploadpack", name: "packobjectshook", kind: GitRuns, match: []string{"uploadpack.packObjectsHook=./h"}},
	{section: "interactive", name: "difffilter", kind: GitRuns, match: []string{"interactive.diffFilter=./f"}},
	{section: "web", name: "browser", kind: GitRuns, match: []string{"web.browser=./b"}},
	{section: "remote", name: "uploadpack", kind: GitRuns, match: []string{"remote.o.uploadpack=./u"}},
	{section: "remote", name: "receivepack", kind: GitRuns, match: []string{"remote.o.receivepack=./r"}},
	{section: "remote", name: "proxy", kind: GitRuns, when: func(v string) bool { return strings.Contains(v, " ") },
		match: []string{"remote.o.proxy=./p x"}, notMatch: []string{"remote.o.proxy=http://p"}},
	{section: "sendemail", name: "*cmd", kind: GitRuns, match: []string{"sendemail.sendmailCmd=./s", "sendemail.x.tocmd=./s"}, notMatch: []string{"sendemail.to=a@b"}},
	{section: "trailer", name: "cmd", sub: someSub, kind: GitRuns, match: []string{"trailer.x.cmd=./t"}, notMatch: []string{"trailer.cmd=./t"}},
	{section: "trailer", name: "command", sub: someSub, kind: GitRuns, match: []string{"trailer.x.command=./t"}},

	{section: "core", name: "hookspath", sub: noSub, kind: GitRedirects, match: []string{"core.hooksPath=.githooks"}, notMatch: []string{"core.x.hookspath=y"}},
	{section: "core", name: "worktree", sub: noSub, kind: GitRedirects, match: []string{"core.worktree=/"}},
	{section: "include", name: "path", sub: noSub, kind: GitRedirects, match: []string{"include.path=../x"}},
	// trace2's targets: git appends its trace to the file (or a new file in
	// the directory) an absolute path names, wherever it is.
	{section: "trace2", name: "*target", kind: GitRedirects, when: func(v string) bool { return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~") },
		match: []string{"trace2.eventTarget=/home/u/.bashrc", "trace2.normalTarget=~/x"}, notMatch: []string{"trace2.eventTarget=1", "trace2.eventNesting=2"}},
	{section: "includeif", name: "+", kind: GitRedirects, match: []string{"includeIf.gitdir:~/.path=../x"}},
	{section: "protocol", name: "allow", kind: GitRedirects, when: func(v string) bool { return v == "always" },
		match: []string{"protocol.allow=always", "protocol.ext.allow=always"}, notMatch: []string{"protocol.ext.allow=never"}},

	{section: "remote", name: "url", kind: GitRemote, when: IsRemote, match: []string{"remote.o.url=http://x/y.git"}, notMatch: []string{"remote.o.url=../y"}},
	{section: "remote", name: "pushurl", kind: GitRemote, when: IsRemote, match: []string{"remote.o.pushurl=git@h:y"}},
	{section: "url", name: "insteadof", kind: GitRemote, match: []string{"url.http://evil/.insteadOf=https://github.com/"}},
	{section: "url", name: "pushinsteadof", kind: GitRemote, match: []string{"url.http://evil/.pushInsteadOf=x"}},
	{section: "http", name: "proxy", kind: GitRemote, match: []string{"http.proxy=http://p", "http.https://x.org/.proxy=http://p"}},
	{section: "https", name: "proxy", sub: noSub, kind: GitRemote, match: []string{"https.proxy=http://p"}, notMatch: []string{"https.x.proxy=http://p"}},
}

// GitKey reports what git does with val as the value of config key (lower
// case): the kinds of every entry of the table the pair matches.
func GitKey(key, val string) GitKeyKind {
	section, rest, dotted := strings.Cut(key, ".")
	sub, name := "", rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		sub, name = rest[:i], rest[i+1:]
	}
	var kind GitKeyKind
	for _, k := range gitKeys {
		if k.section != section || k.sub == noSub && sub != "" || k.sub == someSub && sub == "" {
			continue
		}
		if !gitKeyName(k.name, dotted, name) {
			continue
		}
		if k.when == nil || k.when(val) {
			kind |= k.kind
		}
	}
	return kind
}

// gitKeyName reports whether pattern (an entry's name) matches the name of
// a key; dotted: the key has a name after its section, even an empty one.
func gitKeyName(pattern string, dotted bool, name string) bool {
	switch {
	case pattern == "*":
		return true
	case pattern == "+":
		return dotted
	case strings.HasPrefix(pattern, "*"):
		return strings.HasSuffix(name, pattern[1:])
	}
	return pattern == name
}

// GitKeyRunsCommand reports whether git runs the value of config key (lower
// case) as a command: core.pager, core.fsmonitor, alias.x=!cmd, diff.x.textconv…
func GitKeyRunsCommand(key, val string) bool { return GitKey(key, val)&GitRuns != 0 }

// GitKeyRedirects reports config keys (lower case) that point git at
// programs or config to run from elsewhere.
func GitKeyRedirects(key, val string) bool { return GitKey(key, val)&GitRedirects != 0 }

// GitKeyReachesNetwork reports config (KEY=VALUE, as written) that points git
// at a remote: remote.X.url, url.X.insteadOf, http.proxy.
func GitKeyReachesNetwork(kv string) bool {
	key, val, _ := strings.Cut(strings.ToLower(kv), "=")
	return GitKey(key, val)&GitRemote != 0
}

// IsRemote reports a repository or rsync location on another host:
// scheme://…, user@host:path or host:path.
func IsRemote(a string) bool {
	if strings.Contains(a, "://") {
		return !strings.HasPrefix(a, "file://")
	}
	if strings.HasPrefix(a, "ext::") || strings.HasPrefix(a, "fd::") {
		return true
	}
	colon := strings.IndexByte(a, ':')
	slash := strings.IndexByte(a, '/')
	return colon > 0 && (slash < 0 || colon < slash)
}

// bang reports a value git runs as a shell command (alias.x=!cmd).
func bang(v string) bool { return strings.HasPrefix(v, "!") }

// notBool reports a value that is not one of git's boolean spellings.
func notBool(v string) bool {
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "1", "0", "":
		return false
	}
	return true
}
