package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/shellgate/shellgate/hook"
	"github.com/shellgate/shellgate/policy"
)

const hookUsage = `Usage: shellgate hook AGENT [flags]

Answers AGENT's pre-tool hook: reads the hook's JSON payload on stdin, judges shell
commands with the policy (the root is the project directory the agent reports,
unless --root is given; configuration as usual) and writes the agent's JSON answer
on stdout. Other tools pass through. Nothing is run.

Agents: claude-code (PreToolUse), gemini-cli (BeforeTool), cursor (beforeShellExecution).
Install it with: shellgate install AGENT. See docs/integrations.md.

Exit status: 0 with the answer on stdout; 2 (the agents' blocking status) with a
message on stderr when the payload or the configuration is unusable.

Flags:
`

func cmdHook(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, hookUsage); fs.PrintDefaults() }
	var cf commonFlags
	cf.register(fs)
	agent, rest, code, ok := agentArg(fs, args, stderr)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "shellgate hook: unexpected arguments %q\n", rest)
		return hook.ExitBlock
	}
	res := agent.Handle(os.Stdin, os.Getenv, func(c hook.Call) (policy.Verdict, error) {
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
		cfg, _, err := f.config(stderr)
		if err != nil {
			return policy.Verdict{}, err
		}
		return agent.Decide(cfg, c)
	})
	stdout.Write(res.Stdout)
	fmt.Fprint(stderr, res.Stderr)
	return res.Exit
}

// agentArg parses flags around the AGENT argument, which may come before or after
// them. A usage problem returns ok false and the exit status; bad usage of a hook
// blocks, since the agent reads any other status as "go ahead".
func agentArg(fs *flag.FlagSet, args []string, stderr io.Writer) (*hook.Agent, []string, int, bool) {
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil, 0, false
		}
		return nil, nil, hook.ExitBlock, false
	}
	rest := fs.Args()
	if name == "" && len(rest) > 0 {
		name, rest = rest[0], rest[1:]
	}
	agent, ok := hook.Lookup(name)
	if !ok {
		if name == "" {
			fmt.Fprintf(stderr, "shellgate %s: no agent given; want one of %s\n", fs.Name(), strings.Join(hook.Names(), ", "))
		} else {
			fmt.Fprintf(stderr, "shellgate %s: unknown agent %q; want one of %s\n", fs.Name(), name, strings.Join(hook.Names(), ", "))
		}
		return nil, nil, hook.ExitBlock, false
	}
	return agent, rest, 0, true
}
