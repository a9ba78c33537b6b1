// Package hook answers coding agents' pre-tool hooks with shellgate's policy: Claude
// Code's and Codex's PreToolUse, Gemini CLI's BeforeTool and Cursor's
// beforeShellExecution.
//
// Each agent has its own file, which reads that agent's documented payload into a
// Call and writes the verdict in that agent's documented answer; the decision itself
// is the caller's (the CLI passes Agent.Decide, which checks Calls with
// shellgate.Checker, the same policy as every other face). Handle ties them together and fails closed: a payload that
// cannot be read is refused with a message on stderr and exit status 2, the
// blocking status of every agent here. The same files merge the hook into each
// agent's settings (install.go).
package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/hint"
	"github.com/shellgate/shellgate/policy"
)

// Limits on what a hook reads. A longer command is refused, not checked: checking
// a megabyte of commands takes the policy over a second, before every command, and
// no agent's shell takes one that long in a single argument anyway.
const (
	MaxCommand = 1 << 20
	maxPayload = 4 << 20
)

// ExitBlock is the exit status that blocks the tool call in every agent here,
// with stderr as the reason.
const ExitBlock = 2

// Call is a tool call as an agent's hook payload describes it.
type Call struct {
	// Shell is false for any other tool, which is passed through untouched.
	Shell   bool
	Command string
	// Dir is the absolute directory the command starts in ("" when not given).
	Dir string
	// Root is the project directory the agent reports ("" when it reports none).
	Root string
	// Prefixed: the agent runs the command through shellgate exec (Claude
	// Code's CLAUDE_CODE_SHELL_PREFIX naming shellgate-exec), whose gate and
	// sandbox then apply; otherwise the agent's own shell runs it, unconfined.
	// PrefixProgram is the prefix's program as written and PrefixFlags the
	// flags it passes to shellgate exec. The caller checks that the program
	// is shellgate itself before trusting Prefixed.
	Prefixed      bool
	PrefixProgram string
	PrefixFlags   []string
}

// Decider judges a shell Call. An error (a bad configuration, say) refuses it.
// It sets c.Prefixed to false where the prefix is not one it trusts, so that
// the answer knows whether shellgate runs the command.
type Decider func(c *Call) (policy.Verdict, error)

// Decide judges a Call by the policy of cfg, whose Root is the project, without
// setting up a Gate: a hook runs nothing. It decides as the sandbox that will
// really apply: the gate's of shellgate exec when the agent runs the command
// through it (Call.Prefixed), else none — then what only a sandbox would contain
// (python3 -c …, reading ~/.ssh) is asked about. An agent that puts asks to its
// user notes them for shellgate exec (NoteAsked).
func (a *Agent) Decide(cfg shellgate.Config, c Call) (policy.Verdict, error) {
	newChecker := shellgate.NewChecker
	if c.Prefixed {
		newChecker = shellgate.NewGateChecker
	}
	chk, err := newChecker(cfg)
	if err != nil {
		return policy.Verdict{}, err
	}
	req := shellgate.Request{Command: c.Command, Directory: c.Dir}
	v := chk.Check(req)
	if v.Decision == policy.Ask && a.notesAsks {
		_ = NoteAsked(chk.Root(), c.Command) // without it exec refuses: no worse than no hook
	}
	// The agent's shell runs it: this line is all the audit log will hold of it.
	// A log that cannot be written does not change the answer (OnError says so).
	_ = shellgate.LogHookDecision(cfg, chk.Root(), a.Name, req, v.Verdict)
	return v.Verdict, nil
}

// Agent is one agent's hook protocol.
type Agent struct {
	// Name is the agent as the CLI names it: "claude-code", "codex", "gemini-cli", "cursor".
	Name string
	// parse reads a payload; getenv gives the hook's environment, where some
	// agents report the project directory.
	parse func(payload []byte, getenv func(string) string) (Call, error)
	// answer is the JSON written on stdout for a verdict.
	answer func(policy.Verdict) any
	// pass is the JSON written for another tool; nil writes nothing.
	pass any
	// settings describes where and how install registers the hook.
	settings settingsSpec
	// notesAsks: the agent asks its user and may run the command through
	// shellgate exec, which then needs to know it was asked (asked.go).
	notesAsks bool
	// leaves: an allow of this agent's skips its own permission prompt, so
	// where the agent's own shell runs a command that may write (no sandbox
	// or checkpoint of shellgate's behind it), the hook answers leave, which
	// hands the call to the agent's own permission flow, as without the
	// hook: shellgate never lets through unasked what it cannot contain and
	// the agent would have asked about. Read-only lines are still allowed.
	leaves bool
	leave  any
}

var agents = map[string]*Agent{
	claudeCode.Name: claudeCode,
	codex.Name:      codex,
	geminiCLI.Name:  geminiCLI,
	cursor.Name:     cursor,
}

// Lookup returns the agent called name.
func Lookup(name string) (*Agent, bool) {
	a, ok := agents[name]
	return a, ok
}

// Names lists the agents, sorted.
func Names() []string {
	names := make([]string, 0, len(agents))
	for n := range agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Result is what the hook process prints and how it exits.
type Result struct {
	Stdout []byte
	Stderr string
	Exit   int
}

// Handle reads one payload from in, decides it and returns the answer. It never
// lets a call through that it could not judge.
func (a *Agent) Handle(in io.Reader, getenv func(string) string, decide Decider) Result {
	payload, err := io.ReadAll(io.LimitReader(in, maxPayload+1))
	switch {
	case err != nil:
		return a.block(fmt.Sprintf("cannot read the hook payload: %v", err))
	case len(payload) > maxPayload:
		return a.block(fmt.Sprintf("the hook payload is over %d bytes", maxPayload))
	}
	call, err := a.parse(payload, getenv)
	if err != nil {
		return a.block(err.Error())
	}
	if !call.Shell {
		return a.encode(a.pass)
	}
	var v policy.Verdict
	switch {
	case strings.TrimSpace(call.Command) == "":
		v = refuse("", "The command is empty or only whitespace; there is nothing to run.") // a bad parameter, as for Gate
	case len(call.Command) > MaxCommand:
		// Rule parse, like the policy's own bound on input size.
		v = refuse(policy.RuleParse, fmt.Sprintf("The command is %d bytes; shellgate checks commands of at most %d bytes. Write the script to a file in the project and run that file.", len(call.Command), MaxCommand))
	case call.Dir != "" && !filepath.IsAbs(call.Dir):
		return a.block(fmt.Sprintf("the working directory %q is not absolute", call.Dir))
	default:
		v, err = decide(&call)
		if err != nil {
			return a.block(err.Error())
		}
		if a.leaves && v.Decision == policy.Allow && !v.ReadOnly && !call.Prefixed {
			return a.encode(a.leave)
		}
	}
	return a.encode(a.answer(v))
}

func refuse(rule, reason string) policy.Verdict {
	return policy.Verdict{Decision: policy.Deny, Rule: rule, Reason: reason}
}

func (a *Agent) block(msg string) Result {
	return Result{Stderr: fmt.Sprintf("shellgate hook %s: %s; refusing the tool call.\n", a.Name, msg), Exit: ExitBlock}
}

func (a *Agent) encode(v any) Result {
	if v == nil {
		return Result{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return a.block(fmt.Sprintf("cannot encode the answer: %v", err))
	}
	return Result{Stdout: b.Bytes()}
}

// decodeObject unmarshals a JSON object, naming what is wrong when it is not one.
func decodeObject(payload []byte, v any) error {
	if len(bytes.TrimSpace(payload)) == 0 {
		return errors.New("the hook payload is empty; want a JSON object on stdin")
	}
	if err := json.Unmarshal(payload, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("the hook payload's %q is a JSON %s, want %s", te.Field, te.Value, te.Type)
		}
		return fmt.Errorf("the hook payload is not a valid JSON object: %v", err)
	}
	return nil
}

// reason is the verdict's reason with its rule, as the agent shows it.
func reason(v policy.Verdict) string {
	if v.Decision == policy.Allow {
		return "shellgate: allowed by policy"
	}
	return said(v, v.Reason)
}

// said is text, a reason of v, after "shellgate" and v's rule, unless the
// text names the rule itself, as the policy's reasons do: "(rule privilege)".
func said(v policy.Verdict, text string) string {
	if v.Rule == "" || strings.Contains(text, "(rule "+v.Rule+")") {
		return "shellgate: " + text
	}
	return fmt.Sprintf("shellgate (%s): %s", v.Rule, text)
}

// askReason is the reason of an ask as the user reads it in the agent's approval
// dialog: the policy's reason, and how to stop being asked.
func askReason(v policy.Verdict) string {
	return reason(v) + allowHint(v, " To allow it without asking, add")
}

// allowHint names the user allow pattern that covers an asked command, after lead;
// nothing when no pattern can (policy.Verdict.AllowPattern).
func allowHint(v policy.Verdict, lead string) string {
	if v.AllowPattern == "" {
		return ""
	}
	return fmt.Sprintf("%s [policy] allow = [%s] to %s.", lead, hint.TOMLString(v.AllowPattern), hint.UserConfig())
}
