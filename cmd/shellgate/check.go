package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/config"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/analysis"
	"github.com/shellgate/shellgate/internal/hint"
	"github.com/shellgate/shellgate/policy"
)

// Exit statuses of `shellgate check`: the decision, or why there is none.
const (
	exitCheckAllow  = 0
	exitCheckAsk    = exitNo
	exitCheckDeny   = 2
	exitCheckUsage  = exitUsage
	exitCheckConfig = exitShellgate // as run: a configuration file or setting is wrong
)

const checkUsage = `Usage: shellgate check [flags] -- COMMAND

Shows what the policy decides about COMMAND, and every command it would run, without
running anything. One argument after -- is a command line (with its own quoting);
several are words, each quoted, as exec would run them.

Configuration: the user file, then <root>/.shellgate.toml, then --config, then flags
and BASH_ALLOW_NETWORK=true. A project file may only tighten policy unless trusted
(trust_project_config = true in the user file, or --trust-project). The user file:
%s

Exit status: 0 allow, 1 ask, 2 deny; 64 bad usage (unknown flag, no command,
a --dir that is not a directory); 125 bad configuration, as run.

Flags:
`

// checkFlags are check's own flags; config.LoadOptions gets the configuration ones.
type checkFlags struct {
	commonFlags
	dir           string
	asJSON, rules bool
}

func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	var f checkFlags
	f.register(fs)
	fs.StringVar(&f.dir, "dir", ".", "directory the command starts in, relative to the root")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object instead of text")
	fs.BoolVar(&f.rules, "rules", false, "list the built-in rules and exit")
	head := func(w io.Writer) { fmt.Fprintf(w, checkUsage, displayUserConfig()) }
	fl := failure{cmd: "check", json: wantsJSON(args), stdout: stdout, stderr: stderr}
	if help, err := parseFlags(fs, args, head, stdout); help {
		return 0
	} else if err != nil {
		return fl.usage(err.Error())
	}
	fl.json = f.asJSON
	if f.rules {
		printRules(stdout, f.asJSON)
		return exitCheckAllow
	}
	command := commandLine(fs.Args())
	if strings.TrimSpace(command) == "" {
		return fl.usage("no command given (shellgate check [flags] -- COMMAND)")
	}

	cfg, src, err := f.config(stderr)
	var usage *usageError
	switch {
	case errors.As(err, &usage):
		return fl.usage(err.Error())
	case err != nil:
		return fl.fail(exitCheckConfig, envelope.InvalidParam, err.Error())
	}

	gate, err := shellgate.New(cfg)
	if err != nil {
		return fl.fail(exitCheckConfig, envelope.InvalidParam, "configuration: "+err.Error())
	}
	defer gate.Close()
	v := gate.Check(shellgate.Request{Command: command, Directory: f.dir})
	if v.Code == envelope.InvalidParam {
		// The user's own arguments (a --dir that is a file): bad usage, as
		// run reports it, not a decision of the policy.
		return fl.usage(strings.TrimSuffix(v.Reason, "."))
	}

	root := gate.Info().Root
	out := bufio.NewWriter(stdout) // one write, not one per field
	if f.asJSON {
		writeJSON(out, checkReport(v, root, f.dir, cfg.Policy, src))
	} else {
		printVerdict(out, v, root, cfg.Policy, src)
	}
	out.Flush()
	switch v.Decision {
	case policy.Allow:
		return exitCheckAllow
	case policy.Ask:
		return exitCheckAsk
	default:
		return exitCheckDeny
	}
}

func modeOf(p policy.Settings) policy.Mode {
	if p.Mode == "" {
		return policy.ModeAuto
	}
	return p.Mode
}

func displayUserConfig() string {
	if p := config.DefaultUserConfig(); p != "" {
		return hint.Tilde(p)
	}
	return "none on this system"
}

// checkJSON is the --json output: the verdict, what the line would run, and which files
// configured the decision.
type checkJSON struct {
	Decision string `json:"decision"`
	// Rule and Reason are left out where there is none (an allow), as the
	// text leaves out its rule: and reason: lines, because "rule": "" told a
	// reader nothing.
	Rule       string `json:"rule,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Code       string `json:"code,omitempty"`
	Command    string `json:"command,omitempty"`
	Line       int    `json:"line,omitempty"`
	Col        int    `json:"col,omitempty"`
	SessionKey string `json:"session_key,omitempty"`
	// AllowPattern is what [policy] allow takes to run this command without
	// asking (policy.Verdict.AllowPattern).
	AllowPattern string        `json:"allow_pattern,omitempty"`
	Commands     []commandJSON `json:"commands"`
	Root         string        `json:"root"`
	Dir          string        `json:"dir"`
	Mode         string        `json:"mode"`
	Network      bool          `json:"network"`
	Config       []string      `json:"config_files"`
	Warnings     []string      `json:"warnings"`
	// Relaxed: the rules that would have asked or refused, left out because
	// something else contains the command (relaxedWhy).
	Relaxed []string `json:"relaxed,omitempty"`
}

type commandJSON struct {
	Name    string   `json:"name"`
	Args    []string `json:"args"`
	Dynamic bool     `json:"dynamic,omitempty"`
	Dir     string   `json:"dir,omitempty"` // relative to the root when inside it
	Via     []string `json:"via,omitempty"`
	Line    int      `json:"line"`
	Col     int      `json:"col"`
	Source  string   `json:"source"`
}

func checkReport(v shellgate.Verdict, root, dir string, p policy.Settings, src config.Sources) checkJSON {
	out := checkJSON{
		Decision: string(v.Decision), Rule: v.Rule, Reason: v.Reason, Code: string(v.Code),
		Command: v.Command, Line: v.Line, Col: v.Col, SessionKey: v.SessionKey, AllowPattern: v.AllowPattern,
		Commands: []commandJSON{}, Root: root, Dir: dir, Mode: string(modeOf(p)), Network: p.Network,
		Config: []string{}, Warnings: []string{}, Relaxed: v.Relaxed,
	}
	for _, c := range v.Commands {
		out.Commands = append(out.Commands, commandJSON{
			Name: c.Name, Args: append([]string{}, c.Args...), Dynamic: c.Dynamic,
			Dir: relDir(root, c.Dir), Via: c.Via, Line: c.Pos.Line, Col: c.Pos.Col, Source: c.Source,
		})
	}
	for _, s := range src.Files {
		out.Config = append(out.Config, s.Path)
	}
	for _, w := range src.Warnings {
		out.Warnings = append(out.Warnings, w.Error())
	}
	return out
}

func printVerdict(w io.Writer, v shellgate.Verdict, root string, p policy.Settings, src config.Sources) {
	fmt.Fprintf(w, "decision: %s\n", v.Decision)
	if v.Rule != "" {
		fmt.Fprintf(w, "rule:     %s\n", v.Rule)
	}
	if v.Reason != "" {
		fmt.Fprintf(w, "reason:   %s\n", policy.Visible(v.Reason))
	}
	if v.Command != "" {
		fmt.Fprintf(w, "at:       %d:%d %s\n", v.Line, v.Col, policy.Visible(v.Command))
	}
	if v.SessionKey != "" {
		fmt.Fprintf(w, "approve:  %q for the session\n", v.SessionKey)
	}
	if v.AllowPattern != "" {
		fmt.Fprintf(w, "allow:    [policy] allow = [%s] runs it without asking\n", hint.TOMLString(v.AllowPattern))
	}
	for _, r := range v.Relaxed {
		fmt.Fprintf(w, "relaxed:  %s (%s)\n", r, relaxedWhy(r, p))
	}
	fmt.Fprintf(w, "commands: %d\n", len(v.Commands))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range v.Commands {
		fmt.Fprintf(tw, "  %d:%d\t%s\t%s\n", c.Pos.Line, c.Pos.Col, policy.Visible(commandText(c)), policy.Visible(commandNotes(c, root)))
	}
	tw.Flush()
	network := "off"
	if p.Network {
		network = "on"
	}
	fmt.Fprintf(w, "policy:   mode %s, network %s\n", modeOf(p), network)
	for _, s := range src.Files {
		trust := ""
		if !s.Trusted {
			trust = ", may only tighten"
		}
		fmt.Fprintf(w, "config:   %s (%s%s)\n", s.Path, s.Layer, trust)
	}
}

// commandText shows a command as name and quoted arguments, so that "a b"
// and a b differ; an argument known only at run time as written ("$X", not
// '"$X"', which reads as the text itself), and find -exec's {} as {} (not
// its starting point: "rm ." read as removing the directory).
func commandText(c analysis.Command) string {
	name := c.Name
	if c.Dynamic || name == "" {
		name = "<dynamic>"
		if c.Path != "" {
			name = c.Path
		}
	}
	var b strings.Builder
	b.WriteString(name)
	for i, a := range c.Args {
		var f analysis.ArgFlag
		if i < len(c.Flags) {
			f = c.Flags[i]
		}
		switch {
		case f&analysis.ArgFoundAgain != 0:
			continue // the same {}, at another starting point
		case f&analysis.ArgFound != 0:
			a = "{}"
		case f&analysis.ArgDynamic == 0 || f&analysis.ArgFoundIn != 0:
			a = quoteArg(a)
		}
		b.WriteByte(' ')
		b.WriteString(a)
	}
	return b.String()
}

func commandNotes(c analysis.Command, root string) string {
	var notes []string
	if c.Dynamic {
		notes = append(notes, "dynamic")
	}
	if c.Superseded {
		notes = append(notes, "as defined; judged at its calls")
	}
	if d := relDir(root, c.Dir); d != "" {
		notes = append(notes, "in "+d)
	}
	if len(c.Via) > 0 {
		notes = append(notes, "via "+strings.Join(c.Via, ", "))
	}
	if len(notes) == 0 {
		return ""
	}
	return "(" + strings.Join(notes, "; ") + ")"
}

func quoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// relDir shows dir relative to root when inside it, else as it is.
func relDir(root, dir string) string {
	if dir == "" {
		return ""
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return dir
	}
	return filepath.ToSlash(rel)
}

func printRules(w io.Writer, asJSON bool) {
	if asJSON {
		writeJSON(w, policy.Rules())
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tDECISION\tDESCRIPTION")
	for _, r := range policy.Rules() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Decision, r.Description)
	}
	tw.Flush()
	fmt.Fprint(w, `
These rules read the command line: they decide what to refuse or ask about, and say why.
On Linux the kernel sandbox (--sandbox auto, the default) is what enforces: writes only in
the root, its tool caches and [policy] writable; protected paths read-only; a private /tmp;
secrets absent; its own /proc; no network but the session's loopback; a process
limit. Where it applies, dynamic, stored-code and code-execution no longer ask: what they
guard against is contained. On macOS a Seatbelt profile enforces the writes, protected
paths, secrets and network (the host's loopback), not /tmp, /proc or a process limit.
Without either (--sandbox off, Windows) the rules are all there is.
`)
}

// relaxedWhy says why rule r, which fired, did not decide: what check prints
// beside a decision the README's table of rules would have made stricter.
func relaxedWhy(r string, p policy.Settings) string {
	switch {
	case slices.Contains(p.Relax, r):
		return "switched off by [policy] relax"
	case r == policy.RuleLoseWork:
		return "a checkpoint is taken first: shellgate undo takes it back"
	case slices.Contains(policy.SandboxRules, r):
		return "the sandbox contains what it runs"
	case r == policy.RuleNetwork:
		return "the network is reached only through the session's loopback or shellgate's proxy"
	}
	return "contained where it runs"
}
