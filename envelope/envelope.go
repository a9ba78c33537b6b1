// Package envelope defines shellgate's response: the standard envelope of seed 001
// (status, data, text, stats, context, and error only when status is "error"), its
// status rules and error codes, and the text summary written for a language model.
//
// Every face of shellgate (library, CLI, MCP) returns exactly this value, so an agent
// sees the same JSON whichever way it calls.
package envelope

import "strings"

// Status is the envelope's top-level verdict (seed 001 §4).
type Status string

const (
	// Success: the command ran to completion, exited 0, and nothing was cut or timed out.
	Success Status = "success"
	// Partial: the command ran but the result is incomplete or unsuccessful: a non-zero
	// exit, a signal, truncated output, or a timeout or cancellation after some output.
	Partial Status = "partial"
	// Error: the command did not run, or produced nothing before it was stopped.
	Error Status = "error"
)

// Code is a machine-readable error code (seed 001 §6, plus the codes shellgate adds).
type Code string

const (
	InvalidParam     Code = "INVALID_PARAM"     // a parameter is missing or malformed
	PolicyDenied     Code = "POLICY_DENIED"     // a policy rule refused the command; error.rule names it
	NotFound         Code = "NOT_FOUND"         // the directory does not exist
	AccessDenied     Code = "ACCESS_DENIED"     // a path leaves the project root
	PermissionDenied Code = "PERMISSION_DENIED" // the OS refused to execute
	Timeout          Code = "TIMEOUT"           // timed out before producing any output
	ExecutionError   Code = "EXECUTION_ERROR"   // anything else that stopped the command from running
	// ApprovalRequired: policy says "ask" and nobody could be asked.
	ApprovalRequired Code = "APPROVAL_REQUIRED"
	// Cancelled: the caller cancelled before the command produced any output.
	Cancelled Code = "CANCELLED"
	// SandboxUnavailable: sandbox mode "on", and a layer of it could not be applied.
	SandboxUnavailable Code = "SANDBOX_UNAVAILABLE"
	// CheckpointFailed: the checkpoint of the project before the command could
	// not be taken, so it was not started.
	CheckpointFailed Code = "CHECKPOINT_FAILED"
)

// Envelope is the whole response. JSON field names are seed 001's; the order puts
// the verdict and its reason first, for a model that reads the JSON top down.
type Envelope struct {
	Status  Status  `json:"status"`
	Error   *Err    `json:"error,omitempty"`
	Text    string  `json:"text"`
	Data    Data    `json:"data"`
	Stats   Stats   `json:"stats"`
	Context Context `json:"context"`

	notes     []note // extra warning lines for the text; see Note
	undo      Undo   // who can take a command back, as the text says it; see SetUndo
	bgStopped bool   // the background processes were stopped; see BackgroundStopped
	madeErr   bool   // Error is Settle's own (a silent timeout or cancellation)
	noJobs    bool   // the caller cannot start a job; see NoJobs
	answer    string // the text of a tool that runs no command; see Answer
	head      string // the headline of its refusal; see NotAnswered
}

// Answer returns the envelope of a tool that runs no command (the MCP undo
// tool): its text is answer as it is, its status success, and nothing in it
// reads as a command's run (no exit code, no time, no output sections, no
// data.stdout), because the reader took 'Command succeeded: undo 1 (Exit
// code 0. Took 0ms)' for a command. params is the input as given.
func Answer(answer string, params map[string]any) Envelope {
	e := Envelope{Context: Context{ParamsInput: params}, answer: strings.TrimRight(answer, "\n")}
	e.Settle()
	return e
}

// NotAnswered is the error envelope of a tool that runs no command, headed
// by what was not done ("Nothing undone") where NotRun says "Command not
// run: undo 99" of a command there never was.
func NotAnswered(headline string, params map[string]any, err Err) Envelope {
	e := Envelope{Context: Context{ParamsInput: params}, head: headline}
	e.Refuse(err)
	return e
}

// Note adds a line to the text's warnings, for what the fields cannot say (a
// second spill file, a capped one). Call it before Settle.
func (e *Envelope) Note(s string) { e.notes = append(e.notes, note{text: s}) }

// NoteFile is Note for a line that names a file of the complete output (a
// second spill file): the line is left out when the output shown names the
// file already, in the marker where it was cut.
func (e *Envelope) NoteFile(s, path string) { e.notes = append(e.notes, note{text: s, file: path}) }

// NoteUndo is Note for a line that ends saying how checkpoint id takes the
// command back, as SetUndo says it: s is what comes before.
func (e *Envelope) NoteUndo(s string, id int) {
	e.notes = append(e.notes, note{text: s, undo: id})
}

// A note is a line of Note, NoteFile or NoteUndo.
type note struct {
	text string
	file string // the file it names; see NoteFile
	undo int    // the checkpoint that takes the command back; see NoteUndo
}

// Undo is who can take a command back, for the text to say it in a way its
// reader can act on: a person at a terminal runs `shellgate undo N`, a model
// that has the MCP undo tool calls it, and one that has not can only tell its
// user.
type Undo int

const (
	UndoCommand Undo = iota // `shellgate undo N` (the default: the CLI, the library)
	UndoTool                // the MCP undo tool, with id N
	UndoUser                // the user, with `shellgate undo N`: the reader cannot
)

// SetUndo says who can take the command back (the text's [Changed: …] line and
// an undoable command's note say how) and settles e again.
func (e *Envelope) SetUndo(u Undo) *Envelope {
	if e.undo == u {
		return e
	}
	e.undo = u
	return e.Settle()
}

// NoJobs says the caller cannot run a command as a job (run_in_background
// needs a session: a Gate's own Run has none), so the text does not advise
// it, and settles e again.
func (e *Envelope) NoJobs() {
	if !e.noJobs {
		e.noJobs = true
		e.Settle()
	}
}

// BackgroundStopped says the run is one-shot: what it left in the background
// (data.background_pids) is stopped as it ends, its Gate closing, and the text
// says so rather than "still running", and does not advise running long work
// in the background. It settles e again.
func (e *Envelope) BackgroundStopped() {
	e.bgStopped = true
	e.Settle()
}

// Data is what the command produced.
type Data struct {
	Stdout    string  `json:"stdout"`
	Stderr    string  `json:"stderr"`
	ExitCode  *int    `json:"exit_code"` // null when the command never exited on its own
	Signal    *string `json:"signal"`    // e.g. "SIGKILL"; null unless a signal ended it
	Truncated bool    `json:"truncated"`
	Command   string  `json:"command"`   // the command exactly as given
	Directory string  `json:"directory"` // where it ran, relative to the project root

	TimedOut  bool `json:"timed_out"`
	Cancelled bool `json:"cancelled"` // the caller cancelled the run
	Binary    bool `json:"binary"`    // output looked binary; see FullOutputPath
	// ControlsRemoved: terminal escape sequences other than colours and styles,
	// or control characters, were removed from Stdout or Stderr (or characters
	// painted over by '\r' rendered away); the bytes as printed are in the full
	// output file. Colours alone are removed without it.
	ControlsRemoved bool    `json:"controls_removed,omitempty"`
	FullOutputPath  *string `json:"full_output_path"` // complete output, when truncated or binary
	BackgroundPIDs  []int   `json:"background_pids"`  // descendants still alive when the shell exited
	// Digest lists lines of the omitted middle of truncated output that look like
	// errors, warnings or failures, with their line numbers in the full output.
	Digest string `json:"digest,omitempty"`
	// Summary of truncated output, written by the MCP client's own model on the
	// server's request (sampling; off by default), from what Stdout, Stderr and
	// Digest show.
	Summary string `json:"summary,omitempty"`
	// Job is the job this command runs on as (a session's background command, one
	// still running at yield_after_ms or waiting for input), or the job a job
	// call was about.
	Job *Job `json:"job,omitempty"`
	// Jobs lists a session's jobs, for the list call.
	Jobs []Job `json:"jobs,omitempty"`
	// Changed is what the command changed in the project root, seen from the
	// checkpoint taken before it (absent when checkpoints are off or the
	// command only reads).
	Changed *Changed `json:"changed,omitempty"`
}

// Changed sums up what a command changed in the project root.
type Changed struct {
	// Checkpoint is the command's number in the project's checkpoints:
	// `shellgate undo N` puts the root back as it was before the command.
	Checkpoint int `json:"checkpoint"`
	// Counts of the root's files, .git's left out; Git counts those.
	Added    int `json:"added"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
	Mode     int `json:"mode"`
	Ignored  int `json:"ignored,omitempty"` // kept before, left out now that the ignore rules changed: not deleted
	Git      int `json:"git"`
	// Paths are the first few changes, "deleted src/a.go"; More is how many
	// more there are.
	Paths []string `json:"paths,omitempty"`
	More  int      `json:"more,omitempty"`
	// Pending: the command goes on as a job; what it changes is known when it
	// ends (`shellgate changes N`).
	Pending bool `json:"pending,omitempty"`
}

// Stats are measurements of the run.
type Stats struct {
	TimeMS      int64 `json:"time_ms"`
	StdoutBytes int64 `json:"stdout_bytes"` // every byte the command wrote, kept or not
	StderrBytes int64 `json:"stderr_bytes"`
}

// Context says how the request was understood.
type Context struct {
	Cwd               string         `json:"cwd"` // relative to the project root, POSIX separators
	ParamsInput       map[string]any `json:"params_input"`
	DirectoryResolved string         `json:"directory_resolved"`
	Shell             string         `json:"shell,omitempty"`      // the shell program used, e.g. "/usr/bin/bash"
	Policy            *PolicyInfo    `json:"policy,omitempty"`     // the policy decision, when one was made
	TimeoutMS         int64          `json:"timeout_ms,omitempty"` // the timeout in force, once the command ran
	// Sandbox says how the kernel confined the command: the layers applied, e.g.
	// {"fs":"landlock-v7","net":"netns","pid":"pidns"}, and any "missing"; or "off".
	Sandbox any `json:"sandbox,omitempty"`
}

// PolicyInfo records the policy decision for the command.
type PolicyInfo struct {
	Decision string `json:"decision"` // allow, ask or deny
	Rule     string `json:"rule,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Approved string `json:"approved,omitempty"` // for "ask": who approved it (e.g. "user", "session")
	// Sandboxed: allowed only because the sandbox contains what the command may
	// do (code the parser cannot see); without it the policy would have asked.
	Sandboxed bool `json:"sandboxed,omitempty"`
}

// Err is present only when Status is Error.
type Err struct {
	Code Code `json:"code"`
	// Rule names the policy rule that refused the command, when one did.
	Rule    string `json:"rule,omitempty"`
	Message string `json:"message"`
}
