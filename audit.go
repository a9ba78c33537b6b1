package shellgate

import (
	"cmp"
	"crypto/rand"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/audit"
	"github.com/shellgate/shellgate/policy"
)

// AuditLogEnv names the default audit log when AuditConfig sets neither Off nor
// Path: a file, or "off". Test suites set it so that they never write the user's
// own log.
const AuditLogEnv = "SHELLGATE_AUDIT_LOG"

// AuditConfig is where a Gate records every request (package audit). The zero
// value is the default: on, in the user's state directory (audit.DefaultPath).
type AuditConfig struct {
	Off  bool   // no audit log
	Path string // the log file; "" means $SHELLGATE_AUDIT_LOG, else audit.DefaultPath()
	// MaxBytes and Keep bound the log on disk: it is rotated past MaxBytes (default
	// 10 MiB), keeping Keep older files (default 3).
	MaxBytes int64
	Keep     int
	// OnError is called, once per Gate, with the first failure to open or write the
	// log. Such a failure never fails a command: nothing in its envelope changes,
	// since the model that reads it can do nothing about the user's disk. The CLI
	// prints it on stderr.
	OnError func(error)
}

// openAudit is the audit log c describes, opened by its first entry: nil
// when it is off.
func openAudit(c AuditConfig) (*audit.Lazy, error) {
	opts := audit.Options{MaxBytes: c.MaxBytes, Keep: c.Keep}
	if err := opts.Check(); err != nil {
		return nil, err
	}
	path, off := c.Path, c.Off
	if path == "" && !off {
		path = os.Getenv(AuditLogEnv)
		off = path == "off"
	}
	if off {
		return nil, nil
	}
	return audit.NewLazy(path, opts, c.OnError)
}

// auditCall is one request's audit record: its decision line (if it runs) and
// its result line share id.
type auditCall struct {
	id      string
	req     Request
	session string
	began   time.Time
	decided bool // admitted: its decision line was written
}

// Refused requests are written one by one up to a burst of refusedBurst,
// which refills at refusedRate a second; past it they are counted, and
// written as one summary line (event "refused") per refusedSummary of them,
// or when one is written in full again, or at Close. A flood of refusals
// (9 800 refused calls) used to rotate every earlier line out of the log.
const (
	refusedBurst   = 100
	refusedRate    = 1.0
	refusedSummary = 500
)

// refusals is the budget of refused lines, and the summary being counted.
type refusals struct {
	mu      sync.Mutex
	tokens  float64
	refill  time.Time
	pending *audit.Entry // the summary being counted; nil: none
}

// admit reports whether the refusal e is written in full; a summary due
// first (or one that is full) is returned to be written before it.
func (r *refusals) admit(e audit.Entry) (full bool, summary *audit.Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.refill.IsZero() {
		r.tokens = refusedBurst
	} else {
		r.tokens = min(refusedBurst, r.tokens+now.Sub(r.refill).Seconds()*refusedRate)
	}
	r.refill = now
	if r.tokens >= 1 {
		r.tokens--
		summary, r.pending = r.pending, nil
		return true, summary
	}
	if r.pending == nil {
		r.pending = &audit.Entry{Event: audit.EventRefused, Time: e.Time, Root: e.Root, Rules: map[string]int{}}
	}
	p := r.pending
	p.Count++
	p.Rules[cmp.Or(e.Rule, e.Error)]++
	p.Session, p.Command, p.Rule, p.Error, p.Decision = e.Session, e.Command, e.Rule, e.Error, e.Decision
	if p.Count >= refusedSummary {
		summary, r.pending = p, nil
	}
	return false, summary
}

// flush returns the summary being counted, if any.
func (r *refusals) flush() *audit.Entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pending
	r.pending = nil
	return p
}

// writeResult writes a result line; a refused request's goes through the
// refusals' budget.
func (g *Gate) writeResult(c *auditCall, e audit.Entry) {
	if c.decided || e.Error == "" {
		g.auditLog.Write(e)
		return
	}
	full, summary := g.refused.admit(e)
	if summary != nil {
		g.auditLog.Write(*summary)
	}
	if full {
		g.auditLog.Write(e)
	}
}

// flushRefusals writes the summary of refusals still being counted.
func (g *Gate) flushRefusals() {
	if g.auditLog == nil {
		return
	}
	if p := g.refused.flush(); p != nil {
		g.auditLog.Write(*p)
	}
}

// startAudit begins the audit record of req, and returns it with opts plus the
// option that has admit write its decision line.
func (g *Gate) startAudit(req Request, session string, opts []Option) (*auditCall, []Option) {
	c := &auditCall{req: req, session: session, began: time.Now()}
	if g.auditLog == nil {
		return c, opts
	}
	c.id = strings.ToLower(rand.Text()[:16])
	return c, append(opts[:len(opts):len(opts)], func(o *runOptions) { o.audit = c })
}

// auditDecision writes the decision line of an admitted request, before it starts.
func (g *Gate) auditDecision(c *auditCall, env *envelope.Envelope) {
	if c == nil || g.auditLog == nil {
		return
	}
	c.decided = true
	e := audit.Entry{
		Event: audit.EventDecision, Call: c.id, Time: c.began, Session: c.session, Root: g.root,
		Directory: env.Data.Directory, Command: c.req.Command, Description: c.req.Description,
	}
	if p := env.Context.Policy; p != nil {
		e.Decision, e.Rule, e.Approved, e.ReliedOnSandbox = p.Decision, p.Rule, p.Approved, p.Sandboxed
	}
	if env.Data.Job != nil {
		e.Job = env.Data.Job.ID
	}
	g.auditLog.Write(e)
}

// audit records one request and its envelope in the audit log: for every request,
// allowed, refused, failed or invalid. c.session is "" outside a session.
func (g *Gate) audit(c *auditCall, env *envelope.Envelope) {
	if g.auditLog == nil {
		return
	}
	req, began := c.req, c.began
	e := audit.Entry{
		Event:       audit.EventResult,
		Call:        c.id,
		Description: req.Description,
		Time:        began,
		Session:     c.session,
		Root:        g.root,
		Directory:   env.Data.Directory,
		Command:     req.Command,
		Sandboxed:   env.Context.Sandbox,
		Status:      string(env.Status),
		ExitCode:    env.Data.ExitCode,
		TimedOut:    env.Data.TimedOut,
		Cancelled:   env.Data.Cancelled,
		DurationMS:  time.Since(began).Milliseconds(),
		StdoutBytes: env.Stats.StdoutBytes,
		StderrBytes: env.Stats.StderrBytes,
		Truncated:   env.Data.Truncated,
	}
	if env.Context.Policy == nil && req.Directory != "" {
		e.Directory = req.Directory // refused before it was resolved: as given
	}
	if p := env.Context.Policy; p != nil {
		e.Decision, e.Rule, e.Approved, e.ReliedOnSandbox = p.Decision, p.Rule, p.Approved, p.Sandboxed
	}
	if env.Error != nil {
		e.Error = string(env.Error.Code)
		if e.Rule == "" {
			e.Rule = env.Error.Rule
		}
	}
	if env.Data.Signal != nil {
		e.Signal = *env.Data.Signal
	}
	if env.Data.Job != nil {
		e.Job = env.Data.Job.ID
	}
	g.writeResult(c, e)
}

// auditJob records a job call that acts on a job (input sent, a kill): what
// a REPL or shell on a terminal runs is typed into it.
func (g *Gate) auditJob(session, job, action, sent string, env *envelope.Envelope, began time.Time) {
	if g.auditLog == nil {
		return
	}
	e := audit.Entry{
		Event: audit.EventResult,
		Time:  began, Session: session, Root: g.root, Directory: env.Data.Directory,
		Command: sent, Job: job, Action: action, Status: string(env.Status),
		ExitCode: env.Data.ExitCode, DurationMS: time.Since(began).Milliseconds(),
	}
	if env.Error != nil {
		e.Error = string(env.Error.Code)
	}
	g.auditLog.Write(e)
}

// LogHookDecision appends to cfg's audit log the decision a hook made for agent
// about req: the agent's own shell runs the command (or not), so this line
// (event "hook") is all the log holds of it.
func LogHookDecision(cfg Config, root, agent string, req Request, v policy.Verdict) error {
	a, err := openAudit(cfg.Audit)
	if err != nil || a == nil {
		return err
	}
	e := audit.Entry{
		Event: audit.EventHook, Time: time.Now(), Root: root, Agent: agent,
		Directory: req.Directory, Command: req.Command, Description: req.Description,
		Decision: string(v.Decision), Rule: v.Rule,
	}
	err = a.Append(e)
	if cerr := a.Close(); err == nil {
		err = cerr
	}
	if err != nil && cfg.Audit.OnError != nil {
		cfg.Audit.OnError(err)
	}
	return err
}
