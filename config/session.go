package config

import "fmt"

// sessionTable is [session]: what a session (an MCP connection) keeps.
type sessionTable struct {
	KeepExports *bool   `toml:"keep_exports"` // exported variables carry over, like cd
	MaxJobs     *int64  `toml:"max_jobs"`     // jobs running at once
	KeepEnded   *string `toml:"keep_ended"`   // how long an ended job is remembered
}

// maxJobs bounds [session] max_jobs: each job is a process group and open files.
const maxJobs = 256

// session merges [session]. A project file may carry exports (the policy judged
// each export) but not let a session run more jobs than the user's files allow.
func (m *merger) session(f *parsedFile, trusted bool, ignore func(key, why string)) error {
	t := &f.cfg.Session
	out := &m.cfg.Sessions
	if t.KeepExports != nil {
		out.KeepExports = *t.KeepExports
	}
	if t.MaxJobs != nil {
		n := *t.MaxJobs
		if n < 1 || n > maxJobs {
			return f.errorAt("session.max_jobs", "%d is out of range: want 1 to %d", n, maxJobs)
		}
		if cur := orDefault(int64(out.Jobs.MaxRunning), 16); !trusted && n > cur {
			ignore("session.max_jobs", fmt.Sprintf("raising it from %d lets an agent start more processes", cur))
		} else {
			out.Jobs.MaxRunning = int(n)
		}
	}
	if t.KeepEnded != nil {
		d, err := parseDuration(*t.KeepEnded)
		if err != nil {
			return f.errorAt("session.keep_ended", "%v", err)
		}
		if d <= 0 {
			return f.errorAt("session.keep_ended", "%s must be positive", d)
		}
		out.Jobs.Keep = d
	}
	return nil
}
