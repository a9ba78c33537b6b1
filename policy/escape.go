package policy

import (
	"strings"

	"github.com/shellgate/shellgate/analysis"
)

// escape asks before handing work to a daemon that runs it outside every sandbox.
func (x *check) escape(c *analysis.Command) {
	if !escapeTools[c.Name] || infoOnly(c) {
		return
	}
	switch c.Name {
	case "docker", "podman", "nerdctl":
		for _, a := range c.Args {
			if strings.HasPrefix(a, "-") {
				continue
			}
			if readOnlyDocker[a] {
				return
			}
			break
		}
	case "crontab":
		if hasArg(c.Args, "-l") {
			return
		}
	}
	x.ask(RuleEscape, "`%s` hands work to %s, which runs it outside shellgate's sandbox (rule sandbox-escape): the user must approve it.", c.Source, c.Name)
}
