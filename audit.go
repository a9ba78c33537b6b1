package shellgate

import (
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

// auditor is a Gate's audit log, opened by the first request so that a Gate that
// only checks commands never touches the file.
type auditor struct {
	off     bool
	path    string
	pathErr error // no path: no home directory for the default
	opts    audit.Options
	onError func(error)

	reported sync.Once // OnError is called once

	mu     sync.Mutex
	log    *audit.Log
	closed bool
}

func newAuditor(c AuditConfig) (*auditor, error) {
	a := &auditor{opts: audit.Options{MaxBytes: c.MaxBytes, Keep: c.Keep}, onError: c.OnError, off: c.Off, path: c.Path}
	if err := a.opts.Check(); err != nil {
		return nil, err
	}
	if a.path == "" && !a.off {
		a.path = os.Getenv(AuditLogEnv)
		a.off = a.path == "off"
	}
	if a.path == "" && !a.off {
		a.path, a.pathErr = audit.DefaultPath()
	}
	return a, nil
}

// write appends e, opening the log on first use; a log that could not be opened
// is tried again at the next request.
func (a *auditor) write(e audit.Entry) {
	if err := a.append(e); err != nil {
		// Outside the lock: OnError may do anything, even run a command.
		a.reported.Do(func() {
			if a.onError != nil {
				a.onError(err)
			}
		})
	}
}

func (a *auditor) append(e audit.Entry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.closed:
		return nil
	case a.pathErr != nil:
		return a.pathErr
	case a.log == nil:
		l, err := audit.Open(a.path, a.opts)
		if err != nil {
			return err
		}
		a.log = l
	}
	return a.log.Write(e)
}

// sync fsyncs the lines written so far. Gate.Close has it done while it ends
// the commands, so that close finds nothing left to sync.
func (a *auditor) sync() {
	a.mu.Lock()
	l := a.log
	a.mu.Unlock()
	if l != nil {
		l.Sync()
	}
}

func (a *auditor) close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	if a.log == nil {
		return nil
	}
	return a.log.Close()
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
	if g.auditLog == nil || g.auditLog.off {
		return c, opts
	}
	c.id = strings.ToLower(rand.Text()[:16])
	return c, append(opts[:len(opts):len(opts)], func(o *runOptions) { o.audit = c })
}

// auditDecision writes the decision line of an admitted request, before it starts.
func (g *Gate) auditDecision(c *auditCall, env *envelope.Envelope) {
	if c == nil || g.auditLog == nil || g.auditLog.off {
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
	g.auditLog.write(e)
}

// audit records one request and its envelope in the audit log: for every request,
// allowed, refused, failed or invalid. c.session is "" outside a session.
func (g *Gate) audit(c *auditCall, env *envelope.Envelope) {
	if g.auditLog == nil || g.auditLog.off {
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
	g.auditLog.write(e)
}

// auditJob records a job call that acts on a job (input sent, a kill): what
// a REPL or shell on a terminal runs is typed into it.
func (g *Gate) auditJob(session, job, action, sent string, env *envelope.Envelope, began time.Time) {
	if g.auditLog == nil || g.auditLog.off {
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
	g.auditLog.write(e)
}

// LogHookDecision appends to cfg's audit log the decision a hook made for agent
// about req: the agent's own shell runs the command (or not), so this line
// (event "hook") is all the log holds of it.
func LogHookDecision(cfg Config, root, agent string, req Request, v policy.Verdict) error {
	a, err := newAuditor(cfg.Audit)
	if err != nil || a.off {
		return err
	}
	e := audit.Entry{
		Event: audit.EventHook, Time: time.Now(), Root: root, Agent: agent,
		Directory: req.Directory, Command: req.Command, Description: req.Description,
		Decision: string(v.Decision), Rule: v.Rule,
	}
	err = a.append(e)
	if cerr := a.close(); err == nil {
		err = cerr
	}
	if err != nil && a.onError != nil {
		a.onError(err)
	}
	return err
}
