package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/hook"
)

const execUsage = `Usage: shellgate exec [flags] COMMAND-LINE
       shellgate exec [flags] [--] PROGRAM ARG...

Runs a command through the policy and the gate as if it were run directly: stdin,
stdout and stderr are the command's own (nothing is captured, no envelope; a pipe or
socket is handed to it as is, a terminal or file through a pipe), and the exit
status is the command's. One argument is a shell command line; several are a
program and its arguments, quoted as they are. For CLAUDE_CODE_SHELL_PREFIX, which
passes one command line: see docs/clients.md (the prefix must be one program,
so link shellgate as shellgate-exec, which runs "shellgate exec"). A command that
is exactly this shellgate's "hook AGENT …" (Claude Code runs its hooks through the
prefix too) is answered here, outside the sandbox: the hook only decides.

No timeout unless --timeout is given: a stdio MCP server runs as long as its client.
SIGINT, SIGTERM and SIGHUP end the command's whole process group.

Exit status: the command's own; 128+N if signal N killed it; 124 if it timed out;
130 if interrupted; 125 if shellgate refused it (the reason is on stderr) or could
not run it; 64 bad usage (an unknown flag, no command).

Flags:
`

// forever stands for "no timeout": the gate requires one.
const forever = time.Duration(math.MaxInt64)

func cmdExec(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	var (
		cf      commonFlags
		timeout timeoutFlag
	)
	cf.register(fs)
	cf.registerAudit(fs)
	fs.Var(&timeout, "timeout", "end the command after this long, a `DURATION` such as 30s (default: never)")
	if help, err := parseFlags(fs, args, func(w io.Writer) { fmt.Fprint(w, execUsage) }, stdout); help {
		return 0
	} else if err != nil {
		return usageFailure(stderr, "exec", err.Error())
	}
	words := fs.Args()
	if len(words) == 0 {
		return usageFailure(stderr, "exec", "no command given (shellgate exec [flags] COMMAND-LINE)")
	}
	if hookArgs, ok := ownHook(words); ok {
		// Claude Code runs hook commands through its prefix too: shellgate's own
		// hook answers here, outside the sandbox, which would hide its binary
		// (under /tmp, say) and the notes and audit log it writes.
		return cmdHook(hookArgs, stdout, stderr)
	}
	signals := catchSignals(os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signals.release()
	shellgate.Subreap() // what a command leaves stays below this process (unsupported: the scans of /proc stay)
	command := words[0]
	if len(words) > 1 {
		command = quoteArgv(words)
	}
	cfg, model, err := execConfig(cf, command, len(words) == 1, timeout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "shellgate exec: %v\n", err)
		return exitShellgate
	}
	gate, err := shellgate.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "shellgate exec: %v\n", err)
		return exitShellgate
	}
	defer gate.Close()
	if err := gate.RootProblem(); err != nil {
		fmt.Fprintf(stderr, "shellgate exec: %v\n", err)
		return exitShellgate
	}
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "shellgate exec: cannot read the current directory: %v\n", err)
		return exitShellgate
	}

	opts := []shellgate.Option{shellgate.WithStdio(os.Stdin, stdout, stderr)}
	declined := new(bool)
	if in, out := openTTY(); in != nil {
		defer in.Close()
		var ask shellgate.Approver
		ask, declined = declinable(promptApprover(in, out))
		opts = append(opts, shellgate.WithApprover(ask))
	} else if model != "" && hook.TakeAsked(gate.Info().Root, model) {
		// The hook asked the user about this command in Claude Code's dialog, and
		// Claude Code runs it only once they approved.
		opts = append(opts, shellgate.WithApprover(func(context.Context, shellgate.Question) shellgate.Answer { return shellgate.AllowOnce }))
	}
	env := gate.Run(signals.wait(), shellgate.Request{Command: command, Directory: wd}, opts...)
	if env.Error != nil && env.Error.Code == envelope.InvalidParam {
		// The user's own arguments (a NUL byte, a directory that is not
		// one): bad usage, as run reports it.
		return usageFailure(stderr, "exec", strings.TrimSuffix(env.Error.Message, "."))
	}
	switch {
	case env.Data.TimedOut:
		fmt.Fprintf(stderr, "shellgate: the command timed out after %s and was killed\n", envelope.Duration(timeout.d))
	case sayDeclined(stderr, env, *declined):
	case env.Error != nil && env.Error.Code != envelope.Timeout && env.Error.Code != envelope.Cancelled:
		fmt.Fprintf(stderr, "shellgate: %s\n", env.Error.Message) // the output went straight through
	}
	return exitStatus(env)
}

// execConfig is the configuration for running command as Claude Code's prefix: the
// project directory it reports, the exceptions its Bash wrapper needs (when the
// command came as one line, as Claude Code passes it), and no timeout unless asked.
// model is the model's command inside the wrapper, if command is one.
func execConfig(cf commonFlags, command string, oneLine bool, timeout timeoutFlag, warnings io.Writer) (cfg shellgate.Config, model string, err error) {
	// Claude Code gives its hooks and stdio MCP servers the project directory.
	project := os.Getenv("CLAUDE_PROJECT_DIR")
	if cf.root == "" {
		cf.root = project
	}
	cfg, _, err = cf.config(warnings)
	if err != nil {
		return cfg, "", err
	}
	withKeeper(&cfg)
	if project != "" {
		// Hook commands are written as "$CLAUDE_PROJECT_DIR"/.claude/hooks/…: with
		// its value known, the policy sees which program that is.
		cfg.Env = maps.Clone(cfg.Env)
		if cfg.Env == nil {
			cfg.Env = map[string]string{}
		}
		if _, set := cfg.Env["CLAUDE_PROJECT_DIR"]; !set {
			cfg.Env["CLAUDE_PROJECT_DIR"] = project
		}
	}
	if oneLine {
		home, _ := os.UserHomeDir()
		w := hook.ParseClaudeCodeBash(command, home, os.TempDir(), os.Getenv("CLAUDE_CODE_TMPDIR"))
		cfg.Policy.WritablePaths = append(cfg.Policy.WritablePaths, w.Writable...)
		for _, f := range w.Writable {
			// The cwd file Claude Code reads afterwards: made now, so that the
			// sandbox can show this one file of its temp dir to the command.
			if f, err := os.OpenFile(f, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600); err == nil {
				f.Close()
			}
		}
		cfg.Policy.Allow = append(cfg.Policy.Allow, w.Allow...)
		cfg.Sandbox.Visible = append(cfg.Sandbox.Visible, w.Visible...)
		model = w.Command
	}
	cfg.DefaultTimeout, cfg.MaxTimeout = forever, forever
	if timeout.set {
		cfg.DefaultTimeout = timeout.d
	}
	return cfg, model, nil
}

// ownHook returns the arguments of `shellgate hook` when words (one command line,
// or a program and its arguments) run exactly this shellgate's hook and nothing
// else. Nothing else can pass: the line must be one simple command of literal
// words, and its program this very executable (not a look-alike, not a copy); what
// runs is then the hook's code in this process, which decides and runs nothing.
func ownHook(words []string) ([]string, bool) {
	if len(words) == 1 {
		home, _ := os.UserHomeDir()
		var ok bool
		if words, ok = hook.CommandWords(words[0], home); !ok {
			return nil, false
		}
	}
	if len(words) < 2 || words[1] != "hook" || isExecAlias(words[0]) || !isThisShellgate(words[0]) || namesConfig(words[2:]) {
		return nil, false
	}
	return words[2:], true
}

// namesConfig reports whether hook arguments name a --config file. Trusted
// as the user's, its [audit] path would have the hook, outside the sandbox,
// append a line of the agent's choosing (a command holding $(…)) to any
// file, ~/.bashrc among them; and whether the agent could have written it is
// not for a path to tell (a link in the project, a tool cache, the session's
// temp dir all land outside it). Such a line runs in the sandbox as any
// other command; the hook installs name no --config.
func namesConfig(args []string) bool {
	for _, a := range args {
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && name == "config" {
			return true
		}
	}
	return false
}

// quoteArgv makes one POSIX command line of a program and its arguments.
func quoteArgv(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = quoteArg(w)
	}
	return strings.Join(q, " ")
}
