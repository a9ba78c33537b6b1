package policy

import (
	"strings"

	"github.com/shellgate/shellgate/analysis"
)

// assignments judge environment assignments: prefix, plain or export.
func (x *check) assignments(c *analysis.Command) {
	for _, a := range c.Assigns {
		if !loaderVars[a.Name] && !strings.HasPrefix(a.Name, "GIT_CONFIG") && !strings.HasPrefix(a.Name, "npm_config_") && !strings.HasPrefix(a.Name, "NPM_CONFIG_") && !strings.HasPrefix(a.Name, "DYLD_") && !strings.HasPrefix(a.Name, "LD_") {
			continue
		}
		if harmlessValue(a) {
			continue
		}
		key := a.Name + "=…"
		if k := sessionKey(c); k != "" {
			key += " " + k
		}
		x.askKey(key, RuleExecFlags, "`%s`: setting %s changes which programs, libraries or startup files run (rule code-execution): the user must approve it.", c.Source, a.Name)
	}
}

// harmlessValue reports loader-variable values that change nothing that runs.
func harmlessValue(a analysis.Assignment) bool {
	if a.Dynamic {
		return false
	}
	switch {
	case a.Name == "GOFLAGS":
		for _, d := range dangerousGoFlags {
			if strings.Contains(a.Value, d) {
				return false
			}
		}
		return true
	case strings.HasPrefix(a.Name, "npm_config_") || strings.HasPrefix(a.Name, "NPM_CONFIG_"):
		n := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(a.Name, "npm_config_"), "NPM_CONFIG_"))
		return n != "registry" && n != "script_shell" && n != "node_options" && n != "userconfig" && n != "globalconfig" && n != "prefix" && !strings.Contains(n, "registry")
	case a.Name == "GIT_CONFIG_NOSYSTEM" || a.Name == "GIT_CONFIG_GLOBAL" && a.Value == "/dev/null":
		return true
	case a.Name == "LD_BIND_NOW":
		return true
	case pathListVars[a.Name]:
		// Even a directory inside the project shadows standard modules.
		return a.Value == ""
	}
	return false
}
