package policy

import (
	"github.com/shellgate/shellgate/analysis"
	"github.com/shellgate/shellgate/envelope"
)

// Decision is what the policy says about a command line.
type Decision string

const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// Env is where a command line would run. All paths are absolute.
type Env struct {
	Root    string // the project root
	Dir     string // the starting directory; Root when empty
	Home    string // $HOME as the command will see it
	TempDir string // always writable
}

// Verdict is the policy's decision about a whole command line.
type Verdict struct {
	Decision Decision `json:"decision"`
	// Rule is the id of the rule that decided, e.g. "catastrophic", "confinement",
	// "user.deny"; empty for a plain allow.
	Rule string `json:"rule,omitempty"`
	// Reason is written for the model: what was refused and what to do instead.
	Reason string `json:"reason,omitempty"`
	// Code is the envelope error code a refusal carries: envelope.AccessDenied for
	// confinement, envelope.InvalidParam otherwise (seed 001).
	Code envelope.Code `json:"code,omitempty"`
	// Command is the offending sub-command's text; Line and Col its position.
	Command string `json:"command,omitempty"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	// SessionKey is, for ask, the command prefix a user can approve for the rest of
	// a session, e.g. "npm publish". Empty when the ask cannot be approved that way.
	SessionKey string `json:"session_key,omitempty"`
	// Commands is everything the line would run (for `shellgate check`).
	Commands []analysis.Command `json:"commands"`
}

// Engine judges command lines under one Settings. It is safe for concurrent use.
type Engine struct {
	s Settings
}

// New compiles s. It fails on a malformed pattern, an unknown mode or an unknown
// rule name in Relax.
func New(s Settings) (*Engine, error) {
	return &Engine{s: s}, nil
}

// Check decides about command run under env.
func (e *Engine) Check(command string, env Env) Verdict {
	return e.CheckApproved(command, env, nil)
}

// CheckApproved is Check for a session in which the user has already approved some
// session keys: an ask whose every asking sub-command has an approved key becomes
// allow. A deny stays a deny.
func (e *Engine) CheckApproved(command string, env Env, approved func(key string) bool) Verdict {
	a, err := analysis.Analyze(command, analysis.Options{Root: env.Root, Dir: env.Dir, Home: env.Home})
	if err != nil {
		return Verdict{Decision: Deny, Rule: RuleParse, Code: envelope.InvalidParam,
			Reason: "The command could not be parsed as bash: " + err.Error() + ". Fix the syntax and retry."}
	}
	return Verdict{Decision: Allow, Commands: a.Commands}
}
