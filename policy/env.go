package policy

import (
	"strings"

	"github.com/shellgate/shellgate/internal/analysis"
)

// assignments judge environment assignments: prefix, plain or export.
func (x *check) assignments(c *analysis.Command) {
	for _, a := range c.Assigns {
		if a.Name == "" {
			x.ask(RuleDynamic, "`%s` assigns a variable whose name is only known at run time (rule dynamic), which could change how later commands run. Write the name literally.", c.Source)
			continue
		}
		if a.Name == "GOBIN" && !a.Dynamic {
			x.goBin(c, a.Value, 0) // judged as where go install writes
			continue
		}
		if a.Name == "HISTFILE" && !a.Dynamic {
			x.writeTo(c, a.Value, 0, "HISTFILE (where history -w and -a write)")
			continue
		}
		if strings.HasPrefix(a.Name, "GIT_TRACE") {
			x.gitTrace(c, a.Name, a.Value, a.Dynamic)
			continue
		}
		if !specialVar(a.Name) || harmlessValue(a) {
			continue
		}
		x.ask(RuleExecFlags, "`%s`: setting %s changes which programs, libraries, startup files or servers later commands use (rule code-execution): the user must approve it.", c.Source, a.Name)
	}
	x.inputAssignments(c)
}

// goBin judges a GOBIN setting (GOBIN=DIR before a command, exported, given to
// env, or written by go env -w) as a write target: go install puts programs there.
// The default place, ~/go/bin, is the user's own place for Go tools, where go
// install writes anyway when GOBIN is unset, so naming it changes nothing.
func (x *check) goBin(c *analysis.Command, dir string, f analysis.ArgFlag) {
	if dir == "" {
		return // unset: the default place
	}
	if pl, resolved := x.where(c, dir, f); pl == outside && x.home != "" && resolved == x.home+"/go/bin" {
		return
	}
	x.writeTo(c, dir, f, "GOBIN (where go install puts programs)")
}

// gitTrace judges GIT_TRACE* (and trace2's *Target keys): git appends its
// trace to the file an absolute path names, or to a new file in the
// directory it names; a number or a boolean is a descriptor or stderr.
func (x *check) gitTrace(c *analysis.Command, name, val string, dynamic bool) {
	f := analysis.ArgFlag(0)
	if dynamic {
		f = analysis.ArgDynamic
	}
	if dynamic || strings.HasPrefix(val, "/") {
		x.writeTo(c, val, f, name+" (where git writes its trace)")
	}
}

// specialVar reports variables that change how later commands run: which
// programs, libraries, startup files, directories, registries or proxies.
func specialVar(n string) bool {
	if loaderVars[n] || programVars[n] {
		return true
	}
	for _, p := range []string{"LD_", "DYLD_", "npm_config_", "NPM_CONFIG_", "PIP_", "UV_", "POETRY_", "CARGO_", "RUSTUP_", "BUNDLE_", "GEM_", "PYTHON"} {
		if strings.HasPrefix(n, p) {
			return !harmlessPrefixed[n]
		}
	}
	if strings.HasPrefix(n, "GIT_") {
		return !harmlessGitVars[n] && !analysis.IsCommandVar(n) && !strings.HasPrefix(n, "GIT_AUTHOR_") &&
			!strings.HasPrefix(n, "GIT_COMMITTER_") && !strings.HasPrefix(n, "GIT_TRACE")
	}
	if strings.HasPrefix(n, "GO") {
		return goEnvVars[n]
	}
	l := strings.ToLower(n)
	return strings.HasSuffix(l, "_proxy") && l != "no_proxy"
}

var harmlessPrefixed = map[string]bool{
	"PIP_DISABLE_PIP_VERSION_CHECK": true, "PIP_NO_INPUT": true, "PIP_QUIET": true, "PIP_PROGRESS_BAR": true,
	"PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true, "PYTHONIOENCODING": true, "PYTHONHASHSEED": true,
	"PYTHONUTF8": true, "PYTHONFAULTHANDLER": true, "PYTHONWARNINGS": true, "CARGO_TERM_COLOR": true,
	"CARGO_INCREMENTAL": true, "CARGO_TARGET_DIR": true, "UV_NO_PROGRESS": true, "POETRY_VIRTUALENVS_IN_PROJECT": true,
	"npm_config_loglevel": true, "NPM_CONFIG_LOGLEVEL": true, "npm_config_yes": true,
}

var harmlessGitVars = map[string]bool{
	"GIT_TERMINAL_PROMPT": true, "GIT_OPTIONAL_LOCKS": true, "GIT_FLUSH": true, "GIT_ADVICE": true,
	"GIT_CONFIG_NOSYSTEM": true, "GIT_MERGE_AUTOEDIT": true, "GIT_LITERAL_PATHSPECS": true, "GIT_PROGRESS_DELAY": true,
}

// goEnvVars are the go command's variables that choose programs, flags,
// toolchains, module sources or where go env -w writes.
var goEnvVars = map[string]bool{
	"GOFLAGS": true, "GOPROXY": true, "GOENV": true, "GONOSUMDB": true, "GONOSUMCHECK": true, "GOSUMDB": true,
	"GOINSECURE": true, "GOPRIVATE": true, "GONOPROXY": true, "GOTOOLCHAIN": true, "GOROOT": true, "GOBIN": true,
	"GOPATH": true, "GOMODCACHE": true, "GOEXPERIMENT": true, "GOVCS": true, "GOAUTH": true, "GOTOOLDIR": true,
}

// inputAssignments asks when a builtin assigns a special variable from input
// or by reference: read PATH, printf -v PATH, mapfile PATH, getopts o PATH,
// declare -n r=CDPATH; and shopt -s cdable_vars, which makes cd follow variables.
func (x *check) inputAssignments(c *analysis.Command) {
	var names []string
	switch c.Name {
	case "read", "mapfile", "readarray":
		for _, i := range c.Operands {
			names = append(names, c.Args[i])
		}
		if c.Name == "read" {
			for _, o := range c.Values("a") {
				names = append(names, o.Value)
			}
		}
	case "getopts":
		if len(c.Args) > 1 {
			names = append(names, c.Args[1])
		}
	case "printf":
		for _, o := range c.Values("v") {
			names = append(names, o.Value)
		}
	case "declare", "typeset", "local":
		if c.Has("n") {
			for _, a := range c.Assigns {
				names = append(names, a.Value) // the variable the reference stands for
			}
			for i, a := range c.Args {
				if c.Flags[i]&analysis.ArgDynamic != 0 && !strings.HasPrefix(a, "-") {
					names = append(names, "") // a reference only known at run time
				}
			}
		}
	case "shopt":
		if c.Has("s") && hasArg(c.Args, "cdable_vars") {
			x.ask(RuleDynamic, "`%s` makes cd treat names as variables holding directories (rule dynamic), so where later cd commands go cannot be checked. Use literal paths.", c.Source)
		}
		return
	default:
		return
	}
	for _, n := range names {
		if n == "" || specialVar(n) || analysis.IsCommandVar(n) {
			x.ask(RuleExecFlags, "`%s` sets %s from input or by reference, which changes how later commands run (rule code-execution): the user must approve it.", c.Source, n)
			return
		}
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
	case programVars[a.Name]:
		// A program found on PATH (CC=clang, CC="ccache gcc") or the
		// system's, as typing its name runs it; another path or an option
		// chooses another.
		for _, w := range strings.Fields(a.Value) {
			system := strings.HasPrefix(w, "/usr/") || strings.HasPrefix(w, "/bin/")
			if strings.Contains(w, "/") && (!system || strings.Contains(w, "..")) || strings.HasPrefix(w, "-") {
				return false
			}
		}
		return true
	case pathListVars[a.Name]:
		// Even a directory inside the project shadows standard modules.
		return a.Value == ""
	}
	return false
}
