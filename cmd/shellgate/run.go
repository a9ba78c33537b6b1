package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

const runUsage = `Usage: shellgate run [flags] -- COMMAND

Checks COMMAND against the policy, runs it with bash (--noprofile --norc) inside the
project root, streams its output, and ends with a summary. With --json, prints only the
envelope (status, error, text, data, stats, context) as JSON.

One argument after -- is a command line, with its own quoting and operators:
shellgate run -- 'grep -n "a b" *.go | head'. Several arguments are words, each
quoted, as exec would run them: shellgate run -- rm "my file.txt" removes one file.

Exit status: the command's own exit status; 128+N if a signal N killed it;
124 if it timed out; 130 if interrupted; 125 if shellgate refused or could not run it
(policy deny, approval required, directory outside the root, a bad configuration);
64 bad usage (an unknown flag, a bad flag value, no command or an empty one).

Flags:
`

func cmdRun(args []string, stdout, stderr io.Writer) int {
	signals := catchSignals(os.Interrupt, syscall.SIGTERM)
	defer signals.release()
	shellgate.Subreap() // what a command leaves stays below this process (unsupported: the scans of /proc stay)
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var (
		cf          commonFlags
		dir         = fs.String("dir", ".", "directory to run in, relative to the root")
		timeout     timeoutFlag
		asJSON      = fs.Bool("json", false, "print only the JSON envelope on stdout")
		description = fs.String("description", "", "what the command is for (recorded in the envelope)")
	)
	cf.register(fs)
	cf.registerAudit(fs)
	fs.Var(&timeout, "timeout", "timeout, a `DURATION` such as 30s or 2m (default 2m, max 10m)")
	head := func(w io.Writer) { fmt.Fprint(w, runUsage) }
	help, err := parseFlags(fs, args, head, stdout)
	command := commandLine(fs.Args())
	if err != nil { // the flag package stopped at the bad flag: the command follows --
		command = ""
		if i := slices.Index(args, "--"); i >= 0 {
			command = commandLine(args[i+1:])
		}
	}
	req := shellgate.Request{Command: command, Directory: *dir, Description: *description}
	// A usage error is one line, and still an envelope with --json.
	usage := func(msg string) int {
		if *asJSON || wantsJSON(args) {
			writeJSON(stdout, envelope.NotRun(command, nil, envelope.Err{Code: envelope.InvalidParam, Message: msg}))
		}
		return usageFailure(stderr, "run", msg)
	}
	switch {
	case help:
		return 0
	case err != nil:
		return usage(err.Error())
	case fs.NArg() == 0:
		return usage("no command given (shellgate run [flags] -- COMMAND)")
	case strings.TrimSpace(command) == "":
		return usage("the command is empty (shellgate run [flags] -- COMMAND)")
	}
	cfg, _, err := cf.config(stderr)
	var bad *usageError
	if errors.As(err, &bad) {
		return usage(err.Error())
	}
	if err != nil {
		return fail(stdout, stderr, *asJSON, req, envelope.InvalidParam, err.Error())
	}
	if timeout.set {
		max := cfg.MaxTimeout
		if max == 0 {
			max = shellgate.MaxTimeout
		}
		if timeout.d > max {
			return usage(fmt.Sprintf("--timeout %s is longer than the maximum, %s (max_timeout in the configuration)", envelope.Duration(timeout.d), envelope.Duration(max)))
		}
		ms := timeout.d.Milliseconds()
		req.TimeoutMS = &ms
	}
	withKeeper(&cfg)
	gate, err := shellgate.New(cfg)
	if err != nil {
		return fail(stdout, stderr, *asJSON, req, envelope.InvalidParam, err.Error())
	}
	if err := gate.RootProblem(); err != nil {
		// Every command would be refused: one line, not a refusal's summary.
		gate.Close()
		return fail(stdout, stderr, *asJSON, req, envelope.CheckpointFailed, err.Error())
	}
	closer := &gateCloser{g: gate, done: make(chan struct{})}
	defer closer.wait()
	// Its session's helper starts now, while the command is checked and its
	// sandbox planned; a refused command ends it at once.
	gate.PrestartSandbox()

	var opts []shellgate.Option
	live := &liveOutput{stdout: stdout, stderr: stderr}
	if !*asJSON {
		// Shown in full as it arrives: no file of it, and no note that it was cut.
		opts = append(opts, shellgate.WithOutput(live.write), shellgate.WithoutSpillFiles())
	}
	declined := new(bool)
	if in, out := openTTY(); in != nil {
		defer in.Close()
		var session shellgate.SessionApprovals
		var ask shellgate.Approver
		ask, declined = declinable(promptApprover(in, out))
		opts = append(opts, shellgate.WithApprover(session.Wrap(ask)))
	}
	env := gate.Run(signals.wait(), req, opts...)
	// The command is over: its sandbox ends (the helper's exit, its cgroups)
	// while the envelope is written, not after. The run exits once it has.
	closer.start()
	if env.Error != nil && env.Error.Code == envelope.InvalidParam {
		// The request is the user's own arguments (a NUL byte, a command too
		// long for one command line): bad usage, not a refusal.
		if *asJSON {
			writeJSON(stdout, env)
		}
		return usageFailure(stderr, "run", strings.TrimSuffix(env.Error.Message, "."))
	}
	env.BackgroundStopped() // by gate.Close, under way: a one-shot run leaves nothing behind
	switch {
	case *asJSON:
		writeJSON(stdout, env)
	case sayDeclined(stderr, env, *declined):
	default:
		shown := env // the output itself was streamed live, all of it, as printed
		if !shown.Data.Binary {
			shown.Data.Truncated, shown.Data.ControlsRemoved = false, false
			shown.Settle()
		}
		fmt.Fprintln(stderr, "shellgate: "+shown.Summary())
		live.sayWithheld(stderr, env.Data.FullOutputPath != nil)
	}
	if len(env.Data.BackgroundPIDs) > 0 {
		fmt.Fprintln(stderr, "shellgate: run leaves nothing behind; shellgate mcp keeps jobs that outlive one command.")
	}
	return exitStatus(env)
}

// gateCloser closes a Gate once, in the background from start: wait
// returns when it is closed.
type gateCloser struct {
	g    *shellgate.Gate
	once sync.Once
	done chan struct{}
}

func (c *gateCloser) start() {
	c.once.Do(func() {
		go func() {
			defer close(c.done)
			c.g.Close()
		}()
	})
}

func (c *gateCloser) wait() {
	c.start()
	<-c.done
}

// timeoutFlag is --timeout: a duration with a unit, at least 1ms. Set records that
// it was given, so that an explicit 0s is refused instead of meaning "default".
type timeoutFlag struct {
	d   time.Duration
	set bool
}

func (t *timeoutFlag) String() string {
	if !t.set {
		return ""
	}
	return t.d.String()
}

func (t *timeoutFlag) Set(s string) error {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil && strings.Trim(s, "0123456789") == "":
		return fmt.Errorf("%q has no unit: write %ss for seconds or %sms for milliseconds", s, s, s)
	case err != nil:
		return fmt.Errorf("%q is not a duration such as 30s, 1m30s or 500ms", s)
	case d < time.Millisecond:
		return fmt.Errorf("%s is too short: a timeout is at least 1ms", s)
	}
	t.d, t.set = d, true
	return nil
}

// liveOutput copies output to the terminal as it arrives; binary output is
// counted, not printed.
type liveOutput struct {
	mu             sync.Mutex
	stdout, stderr io.Writer
	withheld       [2]int64 // bytes of binary output not written to stdout, stderr
}

func (l *liveOutput) write(o shellgate.Output) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w, i := l.stdout, 0
	if o.Stream == "stderr" {
		w, i = l.stderr, 1
	}
	if o.Binary {
		l.withheld[i] += int64(len(o.Data))
		return
	}
	w.Write(o.Data)
}

// sayWithheld tells, on stderr, of binary output withheld from a stream that
// is not a terminal (a pipe, a file), where the bytes may have been expected:
// on a terminal the summary's "Binary output" says enough. kept: the full
// output file has them.
func (l *liveOutput) sayWithheld(stderr io.Writer, kept bool) {
	where := ""
	if kept {
		where = " (the full output file has them)"
	}
	for i, name := range []string{"stdout", "stderr"} {
		w := []io.Writer{l.stdout, l.stderr}[i]
		if n := l.withheld[i]; n > 0 && !isTerminal(w) {
			fmt.Fprintf(stderr, "shellgate: %d bytes of binary output withheld from %s%s; shellgate exec passes output through as is.\n", n, name, where)
		}
	}
}

func exitStatus(env envelope.Envelope) int {
	d := env.Data
	switch {
	case env.Error != nil && env.Error.Code == envelope.Timeout, d.TimedOut:
		return exitTimeout
	case d.Cancelled || env.Error != nil && env.Error.Code == envelope.Cancelled:
		return exitCancelled
	case env.Error != nil:
		return exitShellgate
	case d.ExitCode != nil:
		return *d.ExitCode
	case d.Signal != nil:
		if n := signalNumber(*d.Signal); n > 0 {
			return 128 + n
		}
	}
	return exitShellgate
}

// wantsJSON reports whether --json is among the flags of args, for a usage error
// found before the flags were all parsed.
func wantsJSON(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-json", "--json", "-json=true", "--json=true":
			return true
		}
	}
	return false
}

func fail(stdout, stderr io.Writer, asJSON bool, req shellgate.Request, code envelope.Code, msg string) int {
	env := envelope.NotRun(req.Command, nil, envelope.Err{Code: code, Message: msg})
	if asJSON {
		writeJSON(stdout, env)
	} else {
		fmt.Fprintln(stderr, "shellgate run: "+msg)
	}
	return exitShellgate
}

// writeJSON writes v as one line of JSON, for a program or an agent reading
// a pipe (an envelope's indentation was a quarter of its characters), or
// indented for a person at a terminal.
func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	if isTerminal(w) {
		enc.SetIndent("", "  ")
	}
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// declinable wraps a terminal's approver: declined reports that the person at
// the terminal said no to running the command (not to a domain it connects
// to), who needs no more than that said back (sayDeclined).
func declinable(ask shellgate.Approver) (a shellgate.Approver, declined *bool) {
	declined = new(bool)
	return func(ctx context.Context, q shellgate.Question) shellgate.Answer {
		a := ask(ctx, q)
		if a == shellgate.Deny && q.Domain == "" && ctx.Err() == nil {
			*declined = true
		}
		return a
	}, declined
}

// sayDeclined writes, for the person who declined the command at the terminal
// prompt, that it was not run, and reports whether env is that refusal: the
// envelope's message is for a model ("the user declined …; do not retry it").
func sayDeclined(stderr io.Writer, env envelope.Envelope, declined bool) bool {
	if !declined || env.Error == nil || env.Error.Code != envelope.ApprovalRequired {
		return false
	}
	fmt.Fprintln(stderr, "shellgate: Not run: you declined it.")
	return true
}

// promptApprover asks on the terminal: yes, no, or always for this session (seed 003).
func promptApprover(in io.Reader, out io.Writer) shellgate.Approver {
	return func(ctx context.Context, q shellgate.Question) shellgate.Answer {
		always := "always for this session"
		if q.SessionKey != "" {
			always = fmt.Sprintf("always for commands covered by %q", shellgate.OneLine(q.SessionKey))
		}
		// The command as a block (the Gate asks only about one it can show whole).
		shown, _ := q.Shown()
		if q.Domain != "" {
			domain := shellgate.OneLine(q.Domain)
			fmt.Fprintf(out, "\nshellgate: this command connects to %s, on port %d, which is not on the network allow-list:\n%s\nAllow %s for this session? [a]lways / [y]es, this command only / [n]o: ", domain, q.Port, shown, domain)
		} else {
			fmt.Fprintf(out, "\nshellgate: this command needs your approval:\n%s\n%s\nAllow? [y]es / [n]o / [a]%s: ", shown, shellgate.OneLine(q.Why()), always[1:])
		}
		answer := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(in).ReadString('\n')
			answer <- strings.ToLower(strings.TrimSpace(line))
		}()
		select {
		case <-ctx.Done():
			return shellgate.Deny
		case a := <-answer:
			switch a {
			case "y", "yes":
				return shellgate.AllowOnce
			case "a", "always":
				return shellgate.AllowSession
			}
			return shellgate.Deny
		case <-time.After(10 * time.Minute):
			return shellgate.Deny
		}
	}
}
