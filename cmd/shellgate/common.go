package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/config"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/egress"
	"github.com/shellgate/shellgate/internal/sandbox"
	"github.com/shellgate/shellgate/policy"
)

// commonFlags are the configuration flags of every command that builds a Gate, so
// that `check` decides exactly as `run` and `mcp` would with the same flags.
type commonFlags struct {
	root, configFile, mode     string
	sandbox, profile           string
	hostPorts                  portsFlag
	allowDomains               domainsFlag
	allowNetwork               bool
	trustProject, noUserConfig bool
	auditLog                   string // --audit-log, on the commands that run something
	checkpoints                string // --checkpoints on|off
}

// register adds every configuration flag: for the commands that run or judge
// commands (run, check, mcp, exec, hook).
func (c *commonFlags) register(fs *flag.FlagSet) {
	c.registerFiles(fs)
	fs.StringVar(&c.mode, "mode", "", "approval mode, one of `auto|untrusted|never` (default: from the configuration, else auto)")
	c.registerSandbox(fs)
	c.registerCheckpoints(fs)
}

// registerFiles adds the flags that say which configuration files to read
// and where the project root is: every command that reads them.
func (c *commonFlags) registerFiles(fs *flag.FlagSet) {
	fs.StringVar(&c.root, "root", "", "the project root `DIR` (default: root in the config files, else the current directory)")
	fs.StringVar(&c.configFile, "config", "", "a configuration `FILE` (TOML), merged over the user and project files")
	fs.BoolVar(&c.trustProject, "trust-project", false, "let <root>/.shellgate.toml loosen the policy too")
	fs.BoolVar(&c.noUserConfig, "no-user-config", false, "ignore the user configuration file")
}

// registerSandbox adds the flags of the sandbox and the network: for the
// commands that start one (and doctor, which reports it).
func (c *commonFlags) registerSandbox(fs *flag.FlagSet) {
	fs.BoolVar(&c.allowNetwork, "allow-network", false, "allow network clients such as curl and git push (also BASH_ALLOW_NETWORK=true)")
	fs.StringVar(&c.sandbox, "sandbox", "", "the kernel sandbox, `auto|on|off`: auto applies what the kernel offers (default), on refuses to run without every layer, off runs none")
	fs.StringVar(&c.profile, "profile", "", "the sandbox profile, `workspace-write|read-only|full-access` (default workspace-write; full-access: no sandbox)")
	fs.Var(&c.allowDomains, "allow-domain", "with the network off, let commands reach `HOST` through shellgate's proxy (allow-listed egress): a host name, *.domain, an address, or \"registries\" (the package registries the tools here are configured with); repeatable")
	fs.Var(&c.hostPorts, "host-port", "forward port `N` of the host's loopback into the sandbox, whose network is off (a dev server, a database); repeatable")
}

// registerCheckpoints adds --checkpoints.
func (c *commonFlags) registerCheckpoints(fs *flag.FlagSet) {
	fs.StringVar(&c.checkpoints, "checkpoints", "", "checkpoint the project before each command that may write, for shellgate undo: `on|off` (default on)")
}

// portsFlag is a repeatable TCP port flag.
type portsFlag []int

func (p *portsFlag) String() string {
	s := make([]string, len(*p))
	for i, n := range *p {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func (p *portsFlag) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("want a TCP port, 1 to 65535")
	}
	*p = append(*p, n)
	return nil
}

// domainsFlag is a repeatable --allow-domain.
type domainsFlag []string

func (d *domainsFlag) String() string { return strings.Join(*d, ",") }

func (d *domainsFlag) Set(v string) error {
	if !egress.IsPreset(v) {
		if _, err := egress.ParseAllow([]string{v}); errors.Is(err, egress.ErrEmptyEntry) {
			return fmt.Errorf("no domain given; want a host name (example.com), *.example.com, an address, a prefix or %q", egress.PresetRegistries)
		} else if err != nil {
			return err
		}
	}
	*d = append(*d, v)
	return nil
}

// registerAudit adds --audit-log, for the commands that run commands.
func (c *commonFlags) registerAudit(fs *flag.FlagSet) {
	fs.StringVar(&c.auditLog, "audit-log", "", "append a JSON line per request to `FILE`, or \"off\" (default: [audit] in the configuration, else the user state directory, e.g. ~/.local/state/shellgate/audit.jsonl)")
}

// usageError is a flag value that is wrong, as opposed to a configuration file.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// config loads the configuration files and applies the flags over them. Settings the
// files tried to set but may not (an untrusted project file loosening the policy) are
// reported on warnings. A bad flag value is a *usageError.
func (c *commonFlags) config(warnings io.Writer) (shellgate.Config, config.Sources, error) {
	cfg, src, err := config.Load(config.LoadOptions{
		ConfigFile:   c.configFile,
		Root:         c.root,
		NoUserConfig: c.noUserConfig,
		TrustProject: c.trustProject,
	})
	if err != nil {
		return cfg, src, fmt.Errorf("configuration: %w", err)
	}
	for _, w := range src.Warnings {
		fmt.Fprintf(warnings, "shellgate: warning: %v\n", w)
	}
	if c.allowNetwork {
		cfg.Policy.Network = true
	}
	if c.sandbox != "" {
		m, err := sandbox.ParseMode(c.sandbox)
		if err != nil {
			return cfg, src, &usageError{fmt.Sprintf("--sandbox %q: want auto, on or off", c.sandbox)}
		}
		cfg.Sandbox.Mode = m
	}
	if c.profile != "" {
		p, err := sandbox.ParseProfile(c.profile)
		if err != nil {
			return cfg, src, &usageError{fmt.Sprintf("--profile %q: want workspace-write, read-only or full-access", c.profile)}
		}
		cfg.Sandbox.Profile = p
	}
	for _, p := range c.hostPorts {
		if !slices.Contains(cfg.Sandbox.HostPorts, p) {
			cfg.Sandbox.HostPorts = append(cfg.Sandbox.HostPorts, p)
		}
	}
	for _, d := range c.allowDomains {
		if !slices.Contains(cfg.Network.Allow, d) {
			cfg.Network.Allow = append(cfg.Network.Allow, d)
		}
	}
	if len(cfg.Sandbox.HostPorts) > sandbox.MaxHostPorts {
		return cfg, src, &usageError{fmt.Sprintf("--host-port: %d ports in all: at most %d can be forwarded", len(cfg.Sandbox.HostPorts), sandbox.MaxHostPorts)}
	}
	switch c.auditLog {
	case "":
	case "off":
		cfg.Audit.Off = true
	default:
		abs, err := filepath.Abs(c.auditLog)
		if err != nil {
			return cfg, src, &usageError{fmt.Sprintf("--audit-log %q: %v", c.auditLog, err)}
		}
		cfg.Audit.Off, cfg.Audit.Path = false, abs
	}
	// A log that cannot be written does not stop commands; say so once.
	cfg.Audit.OnError = func(err error) {
		fmt.Fprintf(warnings, "shellgate: warning: %v; commands still run, unaudited (this is reported once)\n", err)
	}
	switch c.checkpoints {
	case "":
	case "on":
		cfg.Checkpoints.Off = false
	case "off":
		cfg.Checkpoints.Off = true
	default:
		return cfg, src, &usageError{fmt.Sprintf("--checkpoints %q: want on or off", c.checkpoints)}
	}
	switch m := policy.Mode(c.mode); m {
	case "":
	case policy.ModeAuto, policy.ModeUntrusted, policy.ModeNever:
		cfg.Policy.Mode = m
	default:
		return cfg, src, &usageError{fmt.Sprintf("--mode %q: want auto, untrusted or never", c.mode)}
	}
	return cfg, src, nil
}

// exitUsage is the exit status of every usage error (EX_USAGE): an unknown flag or
// command, a bad flag value, a missing command.
const exitUsage = 64

// parseFlags parses args with fs. On -h it prints the usage (head, then the flags)
// on stdout and reports help; a bad flag is returned for the caller to report, as
// one line: the flag package would print the error and then the whole usage.
func parseFlags(fs *flag.FlagSet, args []string, head func(io.Writer), stdout io.Writer) (help bool, err error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err = fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		head(stdout)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return true, nil
	}
	return false, flagError(fs, args, err)
}

// flagError says what the flag package's err says in the user's own words: the
// flag as they typed it (the package names it "-timout" however it was
// given), and for an unknown one the flag it is a typo of, if any:
// `unknown flag --timout (did you mean --timeout?)`.
func flagError(fs *flag.FlagSet, args []string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		msg = "unknown flag " + typedFlag(args, name)
		if near := nearFlag(fs, name); near != "" {
			msg += " (did you mean --" + near + "?)"
		}
		return errors.New(msg)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Errorf("%s needs a value", typedFlag(args, name))
	}
	// invalid value "x" for flag -timeout: …
	if i := strings.Index(msg, " for flag -"); strings.HasPrefix(msg, "invalid value ") && i >= 0 {
		rest := msg[i+len(" for flag -"):]
		name, why, _ := strings.Cut(rest, ": ")
		return fmt.Errorf("%s %s: %s", typedFlag(args, name), strings.TrimPrefix(msg[:i], "invalid value "), why)
	}
	return err
}

// typedFlag is flag name as args give it (-x or --x, without any =value),
// or --name if none does.
func typedFlag(args []string, name string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		bare, _, _ := strings.Cut(a, "=")
		if strings.HasPrefix(bare, "-") && strings.TrimLeft(bare, "-") == name {
			return bare
		}
	}
	return "--" + name
}

// nearFlag is the flag of fs that name, not one of them, is a typo of (one or
// two letters off: --timout, --no-user-conifg), or "".
func nearFlag(fs *flag.FlagSet, name string) string {
	best, bestDist := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		if d := editDistance(name, f.Name); d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes (flag
// names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// A failure reports the error of a subcommand that prints JSON with --json
// (check, changes, undo): one line on stderr, and with --json the error on
// stdout as the envelope says one, {"error": {"code": …, "message": …}}, so
// that a script reading stdout gets JSON whatever went wrong, as from
// run --json (which prints a whole envelope).
type failure struct {
	cmd            string
	json           bool
	stdout, stderr io.Writer
}

// fail reports msg with code and returns exit.
func (f failure) fail(exit int, code envelope.Code, msg string) int {
	if f.json {
		writeJSON(f.stdout, struct {
			Error envelope.Err `json:"error"`
		}{envelope.Err{Code: code, Message: msg}})
	}
	fmt.Fprintf(f.stderr, "shellgate %s: %s\n", f.cmd, msg)
	return exit
}

// usage reports bad usage, as usageFailure does.
func (f failure) usage(msg string) int {
	if f.json {
		writeJSON(f.stdout, struct {
			Error envelope.Err `json:"error"`
		}{envelope.Err{Code: envelope.InvalidParam, Message: msg}})
	}
	return usageFailure(f.stderr, f.cmd, msg)
}

// usageFailure prints a usage error as one line and says where the usage is.
func usageFailure(stderr io.Writer, cmd, msg string) int {
	fmt.Fprintf(stderr, "shellgate %s: %s; see `shellgate %s -h`\n", cmd, msg, cmd)
	return exitUsage
}

// commandLine makes the arguments after -- one command line. One argument is a
// command line as it is, with its own quoting; several are words, each quoted, as
// exec would take them: `run -- rm "my file.txt"` removes one file, not two.
func commandLine(args []string) string {
	if len(args) == 1 {
		return args[0]
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = quoteArg(a)
	}
	return strings.Join(quoted, " ")
}

// earlySignals catches signals from a background start: the first
// signal.Notify of a process starts the runtime's signal-mask thread and waits
// for it, ~1 ms of every one-shot `run` and `exec`, which then overlaps with
// loading the configuration and making the Gate. Wait for it before
// starting the command (wait); release lets the signals go.
type earlySignals struct {
	ready chan struct{}
	ctx   context.Context
	stop  context.CancelFunc
}

func catchSignals(sigs ...os.Signal) *earlySignals {
	e := &earlySignals{ready: make(chan struct{})}
	go func() {
		defer close(e.ready)
		e.ctx, e.stop = signal.NotifyContext(context.Background(), sigs...)
	}()
	return e
}

// wait waits until the signals are caught and returns the context they cancel.
func (e *earlySignals) wait() context.Context {
	<-e.ready
	return e.ctx
}

func (e *earlySignals) release() {
	<-e.ready
	e.stop()
}
