package shellgate

import (
	"context"
	"sync"
)

// Option adjusts one call of Gate.Run.
type Option func(*runOptions)

type runOptions struct {
	onOutput func(Output)
	approver Approver
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
