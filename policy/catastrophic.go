package policy

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
)

// catastrophic denies what destroys the system rather than the project.
func (x *check) catastrophic(c *analysis.Command) {
	switch c.Name {
	case "rm":
		x.rmCatastrophic(c)
	case "dd":
		x.ddCatastrophic(c)
	}
	if _, what := catastrophicFacts.first(x, c); what != "" {
		x.deny(RuleCatastrophic, "`%s` %s", c.Source, what)
	}
}

// catastrophicFacts are the commands that wreck the machine, and when.
var catastrophicFacts = &catalogue{facts: []fact{
	fact{listed: func(n string) bool { return has(diskTools, n) }, also: func(n string) bool { return strings.HasPrefix(n, "mkfs") },
		test: func(*check, *analysis.Command) string {
			return "would format, partition or wipe a disk (rule catastrophic). Nothing in a project needs this; ask the user."
		},
		match: []string{"mkfs.ext4 /dev/sda1", "wipefs -a /dev/sdb", "parted /dev/sda rm 1"}, notMatch: []string{"mkdir x", "fdisk-helper"}},
	fact{listed: func(n string) bool { return has(powerTools, n) },
		test: func(*check, *analysis.Command) string {
			return "would power off or restart the machine (rule catastrophic). Do not stop the host; ask the user."
		},
		match: []string{"shutdown -h now", "reboot"}, notMatch: []string{"uptime"}},
	fact{programs: []string{"systemctl", "loginctl"},
		test: func(_ *check, c *analysis.Command) string {
			stops := slices.ContainsFunc(c.Args, func(a string) bool {
				return oneOf(a, "poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep", "suspend-then-hibernate", "emergency", "rescue", "soft-reboot")
			})
			return when(stops, "would stop or restart the machine (rule catastrophic). Do not stop the host; ask the user.")
		},
		match: []string{"systemctl reboot", "systemctl --force poweroff", "loginctl suspend"}, notMatch: []string{"systemctl status x", "systemctl restart nginx"}},
	fact{programs: []string{"init", "telinit"},
		test: func(_ *check, c *analysis.Command) string {
			return when(oneOf(first(c.Args), "0", "6", "1", "S"), "would change the machine's runlevel (rule catastrophic). Ask the user.")
		},
		match: []string{"init 0", "telinit 6"}, notMatch: []string{"init --version", "telinit 3"}},
	fact{programs: []string{"kill", "pkill", "killall"},
		test: func(_ *check, c *analysis.Command) string {
			all := slices.ContainsFunc(c.Args, func(a string) bool {
				return (a == "-1" || a == "1") && c.Name == "kill" || a == "init" || a == "systemd"
			})
			return when(all || killsAny(c), "would kill every process or init (rule catastrophic). Kill the specific process you started.")
		},
		match: []string{"kill -9 -1", "kill 1", "pkill init", "killall systemd", "pkill -9 -u $USER", "pkill --euid me", "pkill .",
			"pkill -f ''", "killall -r '.*'", "killall -u me", "pkill -KILL -U 1000"},
		notMatch: []string{"kill 1234", "pkill -1 myserver", "pkill -f 'node server.js'", "pkill -u me node", "killall node", "killall -r '^node$'",
			"pgrep -u me"}},
	fact{programs: []string{"chmod", "chown", "chgrp"},
		test: func(x *check, c *analysis.Command) string {
			if !recursive(c) {
				return ""
			}
			for i, a := range c.Args {
				if c.Flags[i]&analysis.ArgDynamic == 0 && x.isSystemRoot(c, a, c.Flags[i]) {
					return "would change the permissions or owner of the whole system (rule catastrophic). Change specific files inside the project."
				}
			}
			return ""
		},
		match: []string{"chmod -R 777 /", "chown -R me ~", "chgrp --recursive x /*"}, notMatch: []string{"chmod 777 /", "chmod -R u+w src"}},
}}

// ddCatastrophic denies dd writing a device.
func (x *check) ddCatastrophic(c *analysis.Command) {
	for i, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "of="); ok && c.Flags[i]&analysis.ArgDynamic == 0 {
			if pl, _ := x.where(c, v, c.Flags[i]); pl == device {
				x.deny(RuleCatastrophic, "`%s` would overwrite the device %s (rule catastrophic). Write to a file inside the project.", c.Source, v)
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
				// It throws work away (lose-work, not protected-paths: it
				// writes nothing that runs later), and more than undo brings
				// back: the ignored files checkpoints leave out.
				x.ask(RuleLoseWork, "`%s` would delete the whole project, .git and ignored files included, which undo cannot all bring back (rule lose-work): the user must approve it. Delete the build outputs by name instead.", c.Source)
				x.hits[len(x.hits)-1].beyondUndo = true
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

// processNames stand for every process a kill could reach: init, a daemon,
// a shell, a desktop's server, a one-letter name.
var processNames = []string{"systemd", "init", "sshd", "bash", "zsh", "Xorg", "a", "node", "/usr/lib/systemd/systemd --user"}

// killsAny reports a pkill or killall that picks every process, or every
// process of a user, group, session or terminal: a pattern that matches every
// name (pkill ., pkill -f ”, killall -r '.*'), or a selector with no pattern.
func killsAny(c *analysis.Command) bool {
	if c.Name != "pkill" && c.Name != "killall" {
		return false
	}
	if !c.Parsed || c.MoreArgs {
		return false
	}
	pats := make([]string, 0, len(c.Operands))
	for _, i := range c.Operands {
		if c.IsDynamic(i) {
			return false // judged as dynamic, not guessed
		}
		pats = append(pats, c.Args[i])
	}
	if len(pats) == 0 {
		return c.Has("u", "U", "g", "G", "s", "t", "P", "euid", "uid", "group", "pgroup", "session", "terminal", "parent", "user")
	}
	regex := c.Name == "pkill" || c.Has("r", "regexp")
	if !regex || c.Has("x", "exact") && c.Name == "pkill" {
		return false
	}
	for _, p := range pats {
		re, err := regexp.Compile(p)
		if err != nil {
			continue
		}
		all := true
		for _, n := range processNames {
			all = all && re.MatchString(n)
		}
		if all {
			return true
		}
	}
	return false
}
