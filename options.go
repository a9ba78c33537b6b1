package shellgate

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/policy"
)

// Option adjusts one call of Gate.Run.
type Option func(*runOptions)

type runOptions struct {
	onOutput func(Output)
	approver Approver
	stdio    *stdio
	onSpill  func(path string)
	noSpill  bool
	audit    *auditCall // the request's audit record, for its decision line
}

type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// WithoutSpillFiles keeps no file of the complete text output, for a caller that
// shows all of it as it arrives (WithOutput to a terminal, say): only the
// envelope's head and tail are kept. Binary output is still saved.
func WithoutSpillFiles() Option {
	return func(o *runOptions) { o.noSpill = true }
}

// WithSpillFiles calls fn with the path of each file the call's complete output was
// saved to, so that a caller can remove them when they are no longer wanted (the
// MCP server does when a session ends) instead of leaving them to the retention sweep.
func WithSpillFiles(fn func(path string)) Option {
	return func(o *runOptions) { o.onSpill = fn }
}

// Output is a piece of a command's output as it arrives.
type Output struct {
	Stream string // "stdout" or "stderr"
	Data   []byte // valid only during the callback
	Total  int64  // bytes of this stream so far, including Data
	Binary bool   // the stream has been detected as binary
}

// WithOutput calls fn with output as it arrives, for live display or progress
// reports. fn is called from the goroutines reading the command's pipes: it must not
// block for long, and it must copy Data if it keeps it.
func WithOutput(fn func(Output)) Option {
	return func(o *runOptions) { o.onOutput = fn }
}

// WithStdio connects the command to in, out and err instead of the null device
// and the capture: for running a program as if directly (shellgate exec), such as a
// stdio MCP server that talks over its stdin and stdout. Nothing is captured for
// the envelope or spilled to a file; its stdout and stderr are empty. An out or
// err that is an *os.File of a pipe or a socket (not on Windows) is the
// command's own, as it is: it writes there itself, so a reader of both sees
// its lines in the order it wrote them, and the run returns when the command
// exits, while a job it left may write there until it ends (Gate.Close ends
// it). Any other out and err are written from separate goroutines, one for
// both when they are one file. Give in as an *os.File (or nil for the null
// device): another reader is copied in, and the run waits until it ends.
func WithStdio(in io.Reader, out, err io.Writer) Option {
	return func(o *runOptions) { o.stdio = &stdio{in, out, err} }
}

// Question is what an Approver is asked when the policy says "ask".
type Question struct {
	Command string // the whole command line
	Rule    string // the rule that asks
	Reason  string // why, written for a person or a model
	// SessionKey is what an "allow for this session" answer covers (show it with the
	// question): the exact sub-command, the user's ask pattern ("npm publish *"), or a
	// subcommand prefix for daemons and untrusted mode ("docker run"); never a bare
	// program name (policy.Verdict.SessionKey).
	SessionKey string
	// Domain is set when the question is not the command line but a connection
	// it makes, through the proxy of allow-listed egress, to a domain not on the
	// allow-list (Rule "egress"), on Port: "allow once" then lets Command's
	// processes reach it, "allow for this session" the session's later
	// commands too. Command is the command whose process connects, found by
	// the cgroup that holds it (Linux).
	Domain string
	Port   int
	// Left, for a Domain question: Command has returned, and a process it
	// left running (cmd &) connects. A running command's approver is asked.
	Left bool
	// Others are, for a Domain question where the process that connects could
	// not be found (another platform, or it closed the connection), the
	// session's other commands that may be the one connecting: running now,
	// or that left processes running when they returned. Command is then the
	// latest command with an approver, and "allow once" lets them all reach
	// the domain while it runs, where their process cannot be found either
	// (a connection found to be one command's counts that command's answers
	// alone).
	Others []string
}

// Why says, for a person, why the command needs approval: Reason is written for the
// model that sent the command (what to do instead), this for the user asked.
func (q Question) Why() string {
	switch q.Rule {
	case policy.RuleUserAsk:
		return "It matches an \"ask\" rule of the shellgate configuration."
	case policy.RuleUntrusted:
		return "In untrusted mode, anything but a known read-only command needs approval."
	}
	for _, r := range policy.Rules() {
		if r.ID == q.Rule {
			return fmt.Sprintf("It %s (rule %s).", r.Description, r.ID)
		}
	}
	return q.Reason
}

// Limits on a command an approval question can show: one longer is not asked
// about, since a person cannot judge what they are not shown whole.
const (
	MaxShownCommand = 8 << 10 // bytes
	MaxShownLines   = 40      // lines, a run of blank lines counting as one
)

// Shown returns the command as a question shows it: every line after "│ ", so
// that no line of it can pass for the question's own text (a planted "Why you
// are asked" paragraph shows as part of the command); control characters
// escaped (policy.Visible); a run of blank lines as one line saying how many.
// ok is false when the command is over MaxShownCommand or MaxShownLines: it
// must then not be asked about (Gate refuses it); text is then its head.
func (q Question) Shown() (text string, ok bool) {
	lines := strings.Split(policy.Visible(q.Command), "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t")
		if line == "" {
			j := i
			for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
				j++
			}
			if j-i > 1 {
				fmt.Fprintf(&b, "│ [%d empty lines]\n", j-i)
				i = j - 1
				shown++
				continue
			}
		}
		b.WriteString("│ " + lines[i] + "\n")
		shown++
	}
	text = strings.TrimSuffix(b.String(), "\n")
	if len(q.Command) > MaxShownCommand || shown > MaxShownLines {
		return envelope.CutMiddle(text, 2<<10), false
	}
	return text, true
}

// OneLine shows s on one line, for what a question quotes (a session key, a
// reason): control characters escaped (policy.Visible), newlines as \n.
func OneLine(s string) string {
	return strings.ReplaceAll(policy.Visible(s), "\n", `\n`)
}

// Answer is an Approver's decision.
type Answer int

const (
	// Deny refuses the command.
	Deny Answer = iota
	// AllowOnce runs this command this time.
	AllowOnce
	// AllowSession runs it, and lets SessionApprovals remember its SessionKey.
	AllowSession
	// NotAsked refuses it because no one could be asked (a client that can
	// be asked only between calls): the refusal says so, not that the user
	// declined.
	NotAsked
)

// Approver decides a "ask" verdict, for example by prompting a person. It should
// return Deny when ctx is done.
type Approver func(ctx context.Context, q Question) Answer

// WithApprover consults a for commands the policy asks about. Without an approver,
// such commands are refused with APPROVAL_REQUIRED.
func WithApprover(a Approver) Option {
	return func(o *runOptions) { o.approver = a }
}

// SessionApprovals remembers "allow for this session" answers (seed 003's allowlist),
// keyed by the session key the policy names. The zero value is ready to use and
// safe for concurrent use. Keep one per user session: an answer in one session must
// not approve commands in another.
type SessionApprovals struct {
	mu   sync.Mutex
	keys map[string]bool
}

// Allowed reports whether key was approved for this session.
func (s *SessionApprovals) Allowed(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return key != "" && s.keys[key]
}

func (s *SessionApprovals) remember(key string) {
	if key == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		s.keys = map[string]bool{}
	}
	s.keys[key] = true
}

// Wrap returns an Approver that answers AllowSession for remembered keys without
// asking, asks a otherwise, and remembers AllowSession answers.
func (s *SessionApprovals) Wrap(a Approver) Approver {
	return func(ctx context.Context, q Question) Answer {
		if s.Allowed(q.SessionKey) {
			return AllowSession
		}
		if a == nil {
			return Deny
		}
		ans := a(ctx, q)
		if ans == AllowSession {
			s.remember(q.SessionKey)
		}
		return ans
	}
}
