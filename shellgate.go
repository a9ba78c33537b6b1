// Package shellgate is the one place where an AI agent's shell commands are
// understood, decided, run, watched and reported.
//
// A Gate takes a Request (seed 001's command, directory and timeout_ms), checks it
// against the policy (package policy, over the syntax tree from package analysis),
// runs it in a real shell in its own process group (packages shell and runner),
// captures stdout and stderr with bounded memory (package output) and returns the
// standard envelope (package envelope). The CLI and the MCP server are thin faces
// over this package.
package shellgate

import (
	"context"
	"time"

	"github.com/shellgate/shellgate/envelope"
)

// Request is one command to run, with seed 001's parameter names.
type Request struct {
	// Command is the shell command line; chaining (&&, ||, ;) is allowed.
	Command string `json:"command"`
	// Directory is where to run, relative to the project root. Default ".".
	Directory string `json:"directory,omitempty"`
	// TimeoutMS is the timeout in milliseconds, 1…600000. Nil means the default (120000).
	TimeoutMS *int64 `json:"timeout_ms,omitempty"`
	// Timeout is TimeoutMS for Go callers: 0 means the default. Give one or the other.
	Timeout time.Duration `json:"-"`
	// Description says what the command is for; it is recorded, not executed.
	Description string `json:"description,omitempty"`
	// MaxOutputBytes is this call's output budget, stdout and stderr together,
	// 1…Config.MaxOutputLimit. Zero means Config.OutputLimit.
	MaxOutputBytes int `json:"max_output_bytes,omitempty"`

	// The rest need a Session.

	// RunInBackground starts the command as a job and returns at once with its
	// id (data.job); read, wait on, type into or kill it with the job calls.
	// The timeout applies only if given.
	RunInBackground bool `json:"run_in_background,omitempty"`
	// YieldAfterMS: a command still running after this many milliseconds
	// becomes a job, and the call returns its output so far with the job's id;
	// nothing is killed. Nil: the call waits for the end (or the timeout).
	YieldAfterMS *int64 `json:"yield_after_ms,omitempty"`
	// YieldAfter is YieldAfterMS for Go callers.
	YieldAfter time.Duration `json:"-"`
	// TTY runs the command on a pseudo-terminal as a job: REPLs, editors and
	// TUIs work, and what is read is the rendered screen as plain text.
	TTY bool `json:"tty,omitempty"`
}

// params is the request as the caller gave it, for context.params_input.
func (r Request) params() map[string]any {
	p := map[string]any{"command": r.Command}
	if r.Directory != "" {
		p["directory"] = r.Directory
	}
	if r.TimeoutMS != nil {
		p["timeout_ms"] = *r.TimeoutMS
	} else if r.Timeout != 0 {
		p["timeout_ms"] = r.Timeout.Milliseconds()
	}
	if r.Description != "" {
		p["description"] = r.Description
	}
	if r.MaxOutputBytes != 0 {
		p["max_output_bytes"] = r.MaxOutputBytes
	}
	if r.RunInBackground {
		p["run_in_background"] = true
	}
	if r.YieldAfterMS != nil {
		p["yield_after_ms"] = *r.YieldAfterMS
	} else if r.YieldAfter != 0 {
		p["yield_after_ms"] = r.YieldAfter.Milliseconds()
	}
	if r.TTY {
		p["tty"] = true
	}
	return p
}

// Run runs one request with the default configuration rooted at the current
// directory. Anything the command leaves running in the background is killed before
// Run returns; embedders that want background jobs to outlive a call use a Gate.
func Run(ctx context.Context, req Request, opts ...Option) envelope.Envelope {
	g, err := New(Config{})
	if err != nil {
		return envelope.NotRun(req.Command, req.params(), envelope.Err{Code: envelope.ExecutionError, Message: err.Error()})
	}
	defer g.Close()
	g.PrestartSandbox()
	env := g.Run(ctx, req, opts...)
	env.BackgroundStopped() // by g.Close, before Run returns
	return env
}
