// Command shellgate runs AI agents' shell commands safely: it checks them against a
// policy, runs them confined to a project root, and reports a standard JSON envelope.
//
//	shellgate run   [flags] -- COMMAND   run a command, print its output and a summary
//	shellgate check [flags] -- COMMAND   show the policy decision without running
//	shellgate mcp   [flags]              serve the shell tool over MCP (stdio or HTTP)
//	shellgate hook  AGENT                answer an agent's pre-tool hook
//	shellgate exec  [flags] COMMAND      run a command as a prefix would, through the gate
//	shellgate install|uninstall AGENT    add or remove the hook in the agent's settings
//	shellgate changes|undo [flags] [N]   what commands changed in the project; take it back
package main

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/shellgate/shellgate/internal/inherit"
)

// Exit statuses of shellgate itself, the same in every subcommand (docs/cli.md,
// "Exit status"); otherwise `run` and `exec` exit with the command's status,
// and `hook` with the agent's (2 blocks).
const (
	// exitNo is a "no" that is not an error: check's ask, an undo not done
	// (declined, unconfirmed), a command number the checkpoints do not hold.
	exitNo        = 1
	exitTimeout   = 124 // the command timed out and was killed (as GNU timeout)
	exitShellgate = 125 // shellgate refused or could not do it: a refusal, a bad configuration, an error of its own
	exitCancelled = 130 // interrupted (Ctrl-C)
)

const usage = `shellgate: the shell-execution layer for AI coding agents.

Usage:
  shellgate run   [flags] -- COMMAND   check, run and report a command
  shellgate check [flags] -- COMMAND   show the policy decision without running it
  shellgate mcp   [flags]              serve the shell tool over MCP (stdio, or --http ADDR)
  shellgate hook  AGENT                answer AGENT's pre-tool hook (claude-code, codex, gemini-cli, cursor)
  shellgate exec  [flags] COMMAND      run COMMAND through the gate with its own stdio and exit status
  shellgate install|uninstall AGENT    add or remove the hook in AGENT's settings
  shellgate doctor                     say which sandbox layers this machine supports
  shellgate changes [flags] [N]        what recent commands changed in the project (checkpoints)
  shellgate undo    [flags] [N]        put the project back as it was before command N (the last)
  shellgate help  COMMAND              show a command's flags
  shellgate --version                  print the version

Run "shellgate run -h" for flags and exit statuses. Bad usage exits with 64.
`

func main() {
	// Commands get only what shellgate hands them, never a descriptor the
	// agent that started shellgate left open across exec.
	inherit.Stop(3)
	args := os.Args[1:]
	// Installed as shellgate-exec, it is the one program CLAUDE_CODE_SHELL_PREFIX
	// can name (the prefix is quoted as a single word).
	if isExecAlias(os.Args[0]) {
		args = append([]string{"exec"}, args...)
	}
	os.Exit(dispatch(args, os.Stdout, os.Stderr))
}

// isExecAlias reports whether prog is named shellgate-exec, and so runs as
// `shellgate exec`.
func isExecAlias(prog string) bool {
	return strings.TrimSuffix(filepath.Base(prog), ".exe") == "shellgate-exec"
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	cmds := map[string]func([]string, io.Writer, io.Writer) int{
		"run":   cmdRun,
		"check": cmdCheck,
		"mcp":   cmdMCP,

		"hook":      cmdHook,
		"exec":      cmdExec,
		"doctor":    cmdDoctor,
		"changes":   cmdChanges,
		"undo":      cmdUndo,
		"install":   cmdInstall,
		"uninstall": cmdUninstall,

		keeperCommand: cmdKeeper,
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, versionLine())
		return 0
	case "help":
		switch {
		case len(args) == 1, len(args) == 2 && slices.Contains([]string{"-h", "-help", "--help"}, args[1]):
			fmt.Fprint(stdout, usage)
			return 0
		case len(args) == 2 && cmds[args[1]] != nil:
			return cmds[args[1]]([]string{"-h"}, stdout, stderr)
		}
		fmt.Fprintf(stderr, "shellgate help: no command %q%s; see `shellgate -h`\n", strings.Join(args[1:], " "), nearCommand(args[1]))
		return exitUsage
	}
	cmd, ok := cmds[name]
	if !ok {
		what := "command"
		if strings.HasPrefix(name, "-") {
			// A flag before the command (shellgate --root . run): flags follow it.
			what = "flag"
		}
		fmt.Fprintf(stderr, "shellgate: unknown %s %q%s; see `shellgate -h`\n", what, name, nearCommand(name))
		return exitUsage
	}
	return cmd(args[1:], stdout, stderr)
}

// nearCommand is "; did you mean X?" when name is a letter or two off a
// command of the usage (chek, --versoin), or when it is a flag of every
// command given before one; else "".
func nearCommand(name string) string {
	if bare := strings.TrimLeft(name, "-"); bare != name {
		if d := editDistance(bare, "version"); d <= 2 {
			return "; did you mean --version?"
		}
		if d := editDistance(bare, "help"); d <= 1 {
			return "; did you mean --help?"
		}
		return " (flags come after the command: shellgate COMMAND [flags])"
	}
	best, bestDist := "", 3
	for _, c := range []string{"run", "check", "mcp", "hook", "exec", "install", "uninstall", "doctor", "changes", "undo", "help", "version"} {
		if d := editDistance(name, c); d < bestDist && d < len(c) {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// version is the module version this binary was built from ("(devel)" for a build
// in a clone), with the commit when the build recorded one and the version does
// not already name it.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	return moduleVersion(info)
}

func moduleVersion(info *debug.BuildInfo) string {
	v := cmp.Or(info.Main.Version, "(devel)")
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 && !strings.Contains(v, s.Value[:12]) {
			v += " " + s.Value[:12]
			if buildSetting(info, "vcs.modified") == "true" {
				v += "+dirty"
			}
		}
	}
	return v
}

// versionLine is what --version prints: the version, the Go that built it, for
// which system, and the build tags. A build that recorded neither a version nor
// a commit says it is a development build, and why it knows no more.
func versionLine() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "shellgate (unknown) " + runtime.Version()
	}
	return versionText(info, runtime.GOOS+"/"+runtime.GOARCH)
}

func versionText(info *debug.BuildInfo, system string) string {
	built := info.GoVersion + " " + system
	if tags := buildSetting(info, "-tags"); tags != "" {
		built += ", -tags " + tags
	}
	v := moduleVersion(info)
	line := "shellgate " + v + " (" + built + ")"
	if v == "(devel)" {
		line = "shellgate (devel): a development build, no version or commit recorded (built with -buildvcs=false, or outside a git checkout); " + built
	}
	if note := cgoNote(info, system); note != "" {
		line += "\n" + note
	}
	return line
}

// cgoNote says, of a Linux build with cgo on (a plain `go build` where a C
// compiler is found), what it costs and how to build the other way; "" for
// any other build. Such a binary is linked dynamically against the C library
// for net, os/user and go-landlock's psx, and every start pays the dynamic
// loader and the C library's start before Go's own: 1.5-1.9 ms a start here
// (--version, 300 runs each at load ~2; issue 22), twice in a sandboxed run,
// whose helper is the same binary started again.
func cgoNote(info *debug.BuildInfo, system string) string {
	if buildSetting(info, "CGO_ENABLED") != "1" || !strings.HasPrefix(system, "linux/") {
		return ""
	}
	return "built with cgo (dynamically linked): each start costs ~2 ms more; build with CGO_ENABLED=0"
}

func buildSetting(info *debug.BuildInfo, key string) string {
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}
