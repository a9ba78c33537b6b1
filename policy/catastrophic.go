package policy

import (
	"path/filepath"
	"strings"

	"github.com/shellgate/shellgate/analysis"
)

// catastrophic denies what destroys the system rather than the project.
func (x *check) catastrophic(c *analysis.Command) {
	name := c.Name
	switch {
	case strings.HasPrefix(name, "mkfs") || diskTools[name]:
		x.deny(RuleCatastrophic, "`%s` would format, partition or wipe a disk (rule catastrophic). Nothing in a project needs this; ask the user.", c.Source)
	case powerTools[name]:
		x.deny(RuleCatastrophic, "`%s` would power off or restart the machine (rule catastrophic). Do not stop the host; ask the user.", c.Source)
	case name == "systemctl" || name == "loginctl":
		for _, a := range c.Args {
			switch a {
			case "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate", "emergency", "rescue", "soft-reboot":
				x.deny(RuleCatastrophic, "`%s` would stop or restart the machine (rule catastrophic). Do not stop the host; ask the user.", c.Source)
				return
			}
		}
	case name == "init" || name == "telinit":
		if len(c.Args) > 0 && (c.Args[0] == "0" || c.Args[0] == "6" || c.Args[0] == "1" || c.Args[0] == "S") {
			x.deny(RuleCatastrophic, "`%s` would change the machine's runlevel (rule catastrophic). Ask the user.", c.Source)
		}
	case name == "kill" || name == "pkill" || name == "killall":
		for _, a := range c.Args {
			if a == "-1" && name == "kill" || a == "1" && name == "kill" || a == "init" || a == "systemd" {
				x.deny(RuleCatastrophic, "`%s` would kill every process or init (rule catastrophic). Kill the specific process you started.", c.Source)
				return
			}
		}
	case name == "rm":
		x.rmCatastrophic(c)
	case name == "chmod" || name == "chown" || name == "chgrp":
		if !recursive(c) {
			return
		}
		for i, a := range c.Args {
			if c.Flags[i]&analysis.ArgDynamic == 0 && x.isSystemRoot(c, a, c.Flags[i]) {
				x.deny(RuleCatastrophic, "`%s` would change the permissions or owner of the whole system (rule catastrophic). Change specific files inside the project.", c.Source)
				return
			}
		}
	case name == "dd":
		for i, a := range c.Args {
			if v, ok := strings.CutPrefix(a, "of="); ok && c.Flags[i]&analysis.ArgDynamic == 0 {
				if pl, _ := x.where(c, v, c.Flags[i]); pl == device {
					x.deny(RuleCatastrophic, "`%s` would overwrite the device %s (rule catastrophic). Write to a file inside the project.", c.Source, v)
				}
			}
		}
	}
}

func (x *check) rmCatastrophic(c *analysis.Command) {
	if c.Has("no-preserve-root") {
		x.deny(RuleCatastrophic, "`%s` asks rm to delete / itself (rule catastrophic). Delete specific paths inside the project instead.", c.Source)
		return
	}
	for _, i := range c.Operands {
		a := c.Args[i]
		if c.Flags[i]&analysis.ArgDynamic != 0 {
			continue
		}
		if x.isSystemRoot(c, a, c.Flags[i]) {
			x.deny(RuleCatastrophic, "`%s` would delete the whole filesystem or home directory (rule catastrophic). Delete specific paths inside the project instead.", c.Source)
			return
		}
		if recursive(c) && x.root != "" {
			if pl, r := x.where(c, a, c.Flags[i]&^analysis.ArgGlob); pl == inside && r == x.root && c.Flags[i]&analysis.ArgGlob == 0 {
				x.ask(RuleProtected, "`%s` would delete the whole project, .git included (rule protected-paths): the user must approve it. Delete the build outputs by name instead.", c.Source)
			}
		}
		if recursive(c) {
			for _, abs := range c.Abs(a) {
				if systemDirs[filepath.Clean(abs)] {
					x.deny(RuleCatastrophic, "`%s` would delete the system directory %s (rule catastrophic). Delete specific paths inside the project instead.", c.Source, filepath.Clean(abs))
					return
				}
			}
		}
	}
}

// isSystemRoot reports whether the path argument stands for /, /*, $HOME or $HOME/*.
func (x *check) isSystemRoot(c *analysis.Command, a string, f analysis.ArgFlag) bool {
	for _, abs := range c.Abs(a) {
		p := filepath.Clean(abs)
		if f&analysis.ArgGlob != 0 {
			p = filepath.Dir(p)
		}
		if r := x.resolve(p); r == "/" || x.home != "" && r == x.home {
			return true
		}
	}
	return false
}

func recursive(c *analysis.Command) bool { return c.Has("r", "R", "recursive") }
