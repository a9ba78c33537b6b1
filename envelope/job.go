package envelope

// JobState is where a job is in its life.
type JobState string

const (
	// JobRunning: the job's command has not exited.
	JobRunning JobState = "running"
	// JobWaiting: the job is running and blocked reading its input, with no new
	// output: it is waiting for an answer (send one with the input tool).
	JobWaiting JobState = "waiting_for_input"
	// JobExited: the command exited; ExitCode or Signal says how.
	JobExited JobState = "exited"
	// JobKilled: the job was killed (kill, a timeout, the session's end).
	JobKilled JobState = "killed"
)

// Job describes a command running on in a session after the call that started
// it: run in the background, still running at yield_after_ms, or waiting for
// input. Its ID names it to the job tools (output, input, kill, list).
type Job struct {
	ID        string   `json:"id"`
	State     JobState `json:"state"`
	Command   string   `json:"command,omitempty"` // in lists; a call's data.command has it otherwise
	Directory string   `json:"directory,omitempty"`
	TTY       bool     `json:"tty,omitempty"` // runs on a pseudo-terminal
	ExitCode  *int     `json:"exit_code,omitempty"`
	Signal    string   `json:"signal,omitempty"`
	RuntimeMS int64    `json:"runtime_ms"`
	// StdoutBytes and StderrBytes count all the job's output so far.
	StdoutBytes int64 `json:"stdout_bytes"`
	StderrBytes int64 `json:"stderr_bytes"`
}

// Running reports whether the job has not ended.
func (j Job) Running() bool { return j.State == JobRunning || j.State == JobWaiting }
