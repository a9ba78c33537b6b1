package envelope

import "strings"

// Brief is the envelope for a reader that gets only its JSON, as several MCP clients
// give a model only a tool result's structuredContent. Every piece of text is in it
// once: the output is in data alone (Text is the summary without output sections,
// the command or the error), fields at their zero value are left out, and the reason
// for a refusal is in error.message alone; stats are there only where something
// ran. The key order puts status and the error first.
type Brief struct {
	Status Status    `json:"status"`
	Error  *Err      `json:"error,omitempty"`
	Text   string    `json:"text"`
	Data   BriefData `json:"data"`
	// Stats is left out where nothing ran (a refusal, a job list, the undo
	// tool's answer): all zero, it told a reader nothing.
	Stats   *Stats       `json:"stats,omitempty"`
	Context BriefContext `json:"context"`
}

// BriefData is Data without its zero values: the same fields in the same order.
type BriefData struct {
	Stdout          string     `json:"stdout,omitempty"`
	Stderr          string     `json:"stderr,omitempty"`
	ExitCode        *int       `json:"exit_code,omitempty"`
	Signal          *string    `json:"signal,omitempty"`
	Truncated       bool       `json:"truncated,omitempty"`
	Command         string     `json:"command,omitempty"` // empty for job_list
	Directory       string     `json:"directory,omitempty"`
	TimedOut        bool       `json:"timed_out,omitempty"`
	Cancelled       bool       `json:"cancelled,omitempty"`
	Binary          bool       `json:"binary,omitempty"`
	ControlsRemoved bool       `json:"controls_removed,omitempty"`
	FullOutputPath  *string    `json:"full_output_path,omitempty"`
	BackgroundPIDs  []int      `json:"background_pids,omitempty"`
	Digest          string     `json:"digest,omitempty"`
	Summary         string     `json:"summary,omitempty"`
	Job             *BriefJob  `json:"job,omitempty"`
	Jobs            []BriefJob `json:"jobs,omitempty"`
	Changed         *Changed   `json:"changed,omitempty"`
}

// BriefJob is Job without its zero values; a call's own job leaves out too
// what stats and data say of it (its runtime, byte counts, how it ended).
type BriefJob struct {
	ID          string   `json:"id"`
	State       JobState `json:"state"`
	Command     string   `json:"command,omitempty"`
	Directory   string   `json:"directory,omitempty"`
	TTY         bool     `json:"tty,omitempty"`
	ExitCode    *int     `json:"exit_code,omitempty"`
	Signal      string   `json:"signal,omitempty"`
	RuntimeMS   int64    `json:"runtime_ms,omitempty"`
	StdoutBytes int64    `json:"stdout_bytes,omitempty"`
	StderrBytes int64    `json:"stderr_bytes,omitempty"`
}

// BriefContext is Context without what data already says (the command), but for
// cwd and directory_resolved, which seed 001 requires of every context.
type BriefContext struct {
	// Cwd is the working directory, relative to the root (seed 001: required).
	Cwd string `json:"cwd"`
	// ParamsInput is the input as given, less the command (data.command has it).
	ParamsInput map[string]any `json:"params_input,omitempty"`
	// DirectoryResolved is the directory as resolved, relative to the root.
	DirectoryResolved string `json:"directory_resolved"`
	// Shell is the shell the command ran with, left out when it is the one
	// the reader knows (Known).
	Shell string `json:"shell,omitempty"`
	// Policy is the decision, left out for a plain allow (the command ran); its
	// reason is left out when error.message carries it.
	Policy *PolicyInfo `json:"policy,omitempty"`
	// TimeoutMS is the timeout in force, left out when params_input gives it
	// or it is the default the reader knows (Known).
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	// Sandbox is context.sandbox only when a layer is missing: the tool's
	// description already says what a complete sandbox does.
	Sandbox any `json:"sandbox,omitempty"`
}

// Known is what the reader of a Brief has been told already, as an MCP tool's
// description tells its model: the shell every command runs with and the
// default timeout. The Brief's context leaves each out where it is that.
type Known struct {
	Shell     string
	TimeoutMS int64
}

// Brief returns the envelope's Brief. Call it after Settle.
func (e *Envelope) Brief() Brief { return e.BriefKnowing(Known{}) }

// BriefKnowing is Brief for a reader who knows k.
func (e *Envelope) BriefKnowing(k Known) Brief {
	d := e.Data
	b := Brief{
		Status: e.Status,
		Error:  e.Error,
		Text:   e.render(briefText),
		Data: BriefData{Stdout: d.Stdout, Stderr: d.Stderr, ExitCode: d.ExitCode, Signal: d.Signal, Truncated: d.Truncated,
			Command: d.Command, Directory: d.Directory, TimedOut: d.TimedOut, Cancelled: d.Cancelled, Binary: d.Binary,
			ControlsRemoved: d.ControlsRemoved, FullOutputPath: d.FullOutputPath, BackgroundPIDs: d.BackgroundPIDs,
			Digest: d.Digest, Summary: d.Summary, Changed: d.Changed},
		Context: BriefContext{Cwd: e.Context.Cwd, DirectoryResolved: e.Context.DirectoryResolved, Shell: e.Context.Shell, TimeoutMS: e.Context.TimeoutMS},
	}
	if e.ran() {
		st := e.Stats
		b.Stats = &st
	}
	if j := d.Job; j != nil {
		// The call's own job: how it ended is the call's, in data already (as
		// its command is), and its runtime and output the call's stats.
		c := BriefJob(*j)
		if c.ExitCode != nil && d.ExitCode != nil && *c.ExitCode == *d.ExitCode {
			c.ExitCode = nil
		}
		if d.Signal != nil && c.Signal == *d.Signal {
			c.Signal = ""
		}
		if (Stats{TimeMS: c.RuntimeMS, StdoutBytes: c.StdoutBytes, StderrBytes: c.StderrBytes}) == e.Stats {
			c.RuntimeMS, c.StdoutBytes, c.StderrBytes = 0, 0, 0
		}
		b.Data.Job = &c
	}
	for _, j := range d.Jobs {
		b.Data.Jobs = append(b.Data.Jobs, BriefJob(j))
	}
	if c := d.Changed; c != nil && c.none() {
		b.Data.Changed = nil // undoing it would change nothing
	}
	if m, ok := e.Context.Sandbox.(map[string]any); ok && m["missing"] != nil {
		b.Context.Sandbox = m
	}
	for k, v := range e.Context.ParamsInput {
		if k == "command" {
			continue
		}
		if b.Context.ParamsInput == nil {
			b.Context.ParamsInput = map[string]any{}
		}
		b.Context.ParamsInput[k] = v
	}
	if _, ok := b.Context.ParamsInput["timeout_ms"]; ok || k.TimeoutMS != 0 && b.Context.TimeoutMS == k.TimeoutMS {
		b.Context.TimeoutMS = 0
	}
	if k.Shell != "" && b.Context.Shell == k.Shell {
		b.Context.Shell = ""
	}
	if p := e.Context.Policy; p != nil && (p.Decision != "allow" || p.Approved != "") {
		c := *p
		if e.Error != nil && c.Reason != "" && strings.Contains(e.Error.Message, c.Reason) {
			c.Reason = ""
		}
		b.Context.Policy = &c
	}
	return b
}

// none reports whether c says the command changed nothing in the root and is not
// still running: a checkpoint's number alone tells a model nothing it can use.
func (c *Changed) none() bool {
	return !c.Pending && c.Added == 0 && c.Modified == 0 && c.Deleted == 0 && c.Mode == 0 &&
		c.Ignored == 0 && c.Git == 0 && len(c.Paths) == 0 && c.More == 0
}
