package policy

import (
	"strings"

	"github.com/shellgate/shellgate/analysis"
)

// escape asks before handing work to a daemon that runs it outside every sandbox.
func (x *check) escape(c *analysis.Command) {
	if c.Name == "git" {
		x.gitEscape(c)
		return
	}
	if (c.Name == "pre-commit" || c.Name == "prek") && len(c.Operands) > 0 && strings.HasPrefix(c.Args[c.Operands[0]], "install") {
		x.ask(RuleProtected, "`%s` installs git hooks, which run later outside any check (rule protected-paths): the user must approve it.", c.Source)
		return
	}
	if !escapeTools[c.Name] || infoOnly(c) {
		return
	}
	switch c.Name {
	case "docker", "podman", "nerdctl":
		if len(c.Operands) > 0 {
			sub := c.Args[c.Operands[0]]
			if readOnlyDocker[sub] {
				return
			}
			// docker image ls, docker container inspect …
			if len(c.Operands) > 1 && dockerObjects[sub] && readOnlyDocker[c.Args[c.Operands[1]]] {
				return
			}
		}
	case "launchctl":
		if len(c.Operands) > 0 && readOnlyLaunchctl[c.Args[c.Operands[0]]] {
			return
		}
	case "crontab":
		if hasArg(c.Args, "-l") {
			return
		}
	}
	x.ask(RuleEscape, "`%s` hands work to %s, which runs it outside shellgate's sandbox (rule sandbox-escape): the user must approve it.", c.Source, c.Name)
}

// dockerObjects are docker's management commands: docker OBJECT VERB.
var dockerObjects = map[string]bool{
	"image": true, "container": true, "volume": true, "network": true, "system": true, "context": true,
	"builder": true, "buildx": true, "plugin": true, "node": true, "service": true, "stack": true, "secret": true, "config": true,
}

var readOnlyLaunchctl = map[string]bool{"list": true, "print": true, "print-disabled": true, "blame": true, "version": true, "help": true, "managerpid": true, "manageruid": true}

// gitEscape asks before git schedules itself or installs hooks that run later
// outside any check: git maintenance start|register, git lfs install.
func (x *check) gitEscape(c *analysis.Command) {
	if len(c.Operands) == 0 {
		return
	}
	switch op := c.Args[c.Operands[0]]; {
	case c.Sub == "maintenance" && (op == "start" || op == "register"):
		x.ask(RuleEscape, "`%s` schedules git to run in the background from the system's scheduler, outside shellgate (rule sandbox-escape): the user must approve it.", c.Source)
	case c.Sub == "lfs" && op == "install":
		x.ask(RuleProtected, "`%s` installs git hooks, which run later outside any check (rule protected-paths): the user must approve it.", c.Source)
	}
}
