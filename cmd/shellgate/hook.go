package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/shellgate/shellgate/hook"
	"github.com/shellgate/shellgate/policy"
)

const hookUsage = `Usage: shellgate hook AGENT [flags]

Answers AGENT's pre-tool hook: reads the hook's JSON payload on stdin, judges shell
commands with the policy (the root is the project directory the agent reports,
unless --root is given; configuration as usual) and writes the agent's JSON answer
on stdout. Other tools pass through. Nothing is run.

The agent's own shell runs what is allowed, with no sandbox, so what only a sandbox
would contain is asked about (python3 -c, perl -e, reading ~/.ssh) — unless Claude
Code's CLAUDE_CODE_SHELL_PREFIX runs commands through shellgate-exec: then the
hook decides as that exec and its sandbox will.

Agents: claude-code and codex (PreToolUse), gemini-cli (BeforeTool), cursor
(beforeShellExecution).
Install it with: shellgate install AGENT. See docs/clients.md.

Exit status: 0 with the answer on stdout; 2 (the agents' blocking status) with a
message on stderr when the arguments, the payload or the configuration are unusable.

Flags:
`

func cmdHook(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	var cf commonFlags
	cf.register(fs)
	agent, rest, help, err := agentArg(fs, args, func(w io.Writer) { fmt.Fprint(w, hookUsage) }, stdout)
	if help {
		return 0
	}
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("unexpected arguments %q", rest)
	}
	if err != nil {
		// One line, as every usage error, but the blocking status: the agent
		// reads any other as "go ahead".
		usageFailure(stderr, "hook", err.Error())
		return hook.ExitBlock
	}
	res := agent.Handle(os.Stdin, os.Getenv, func(c *hook.Call) (policy.Verdict, error) {
		f := cf
		if f.root == "" {
			f.root = c.Root
			if f.root == "" {
				f.root = c.Dir
			}
			// Name where the root came from: config.Load would call it --root.
			if fi, err := os.Stat(f.root); err != nil || !fi.IsDir() {
				return policy.Verdict{}, fmt.Errorf("the project directory %s reports, %q, is not a directory", agent.Name, f.root)
			}
		}
		// Only this shellgate, under the name shellgate-exec, with flags exec
		// takes, routes the command through a gate: anything else is no sandbox.
		if c.Prefixed && (!isThisShellgate(c.PrefixProgram) || !prefixFlags(&f, c.PrefixFlags)) {
			c.Prefixed = false
		}
		cfg, _, err := f.config(stderr)
		if err != nil {
			return policy.Verdict{}, err
		}
		return agent.Decide(cfg, *c)
	})
	stdout.Write(res.Stdout)
	fmt.Fprint(stderr, res.Stderr)
	return res.Exit
}

// agentArg parses flags around the AGENT argument, which may come before or after
// them. help reports -h, whose usage is printed on stdout; err is bad usage.
func agentArg(fs *flag.FlagSet, args []string, head func(io.Writer), stdout io.Writer) (agent *hook.Agent, rest []string, help bool, err error) {
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if help, err := parseFlags(fs, args, head, stdout); help || err != nil {
		return nil, nil, help, err
	}
	rest = fs.Args()
	if name == "" && len(rest) > 0 {
		name, rest = rest[0], rest[1:]
	}
	agent, ok := hook.Lookup(name)
	switch {
	case !ok && name == "":
		return nil, nil, false, fmt.Errorf("no agent given; want one of %s", strings.Join(hook.Names(), ", "))
	case !ok:
		return nil, nil, false, fmt.Errorf("unknown agent %q; want one of %s", name, strings.Join(hook.Names(), ", "))
	}
	return agent, rest, false, nil
}

// prefixFlags applies the flags an agent's prefix passes to shellgate exec
// (--sandbox off, say) over the hook's own, so that the hook decides as that
// exec will. It reports false when exec would not take them.
func prefixFlags(f *commonFlags, flags []string) bool {
	if len(flags) == 0 {
		return true
	}
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var timeout timeoutFlag
	saved := *f
	f.register(fs) // which sets every flag to its default:
	f.registerAudit(fs)
	*f = saved // the hook's own stay unless the prefix gives them
	fs.Var(&timeout, "timeout", "")
	if fs.Parse(flags) != nil || fs.NArg() > 0 {
		*f = saved
		return false
	}
	return true
}

// isThisShellgate reports whether prog (a path, or a name looked up in PATH) is
// the running shellgate's executable, through any links.
func isThisShellgate(prog string) bool {
	if !strings.ContainsAny(prog, `/\\`) {
		p, err := exec.LookPath(prog)
		if err != nil {
			return false
		}
		prog = p
	}
	self, err := os.Executable()
	if err != nil {
		return false
	}
	a, err := os.Stat(prog)
	if err != nil {
		return false
	}
	b, err := os.Stat(self)
	return err == nil && os.SameFile(a, b)
}
