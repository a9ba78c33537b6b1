package shellgate

import (
	"crypto/rand"
	"os"
	"strings"
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
	g.auditLog.Write(e)
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
