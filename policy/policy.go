package policy

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/shellgate/shellgate/internal/analysis"
	"github.com/shellgate/shellgate/internal/realpath"
)

// Decision is what the policy says about a command line.
type Decision string

const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

func (d Decision) rank() int {
	switch d {
	case Deny:
		return 2
	case Ask:
		return 1
	}
	return 0
}

// Env is where a command line would run. All paths are absolute.
type Env struct {
	Root string // the project root
	Dir  string // the starting directory; Root when empty
	Home string // $HOME as the command will see it
	// TempDir is always writable, and is the command's $TMPDIR (and $TMP, $TEMP).
	// Leave it empty rather than pointing it at a shared /tmp that holds other
	// projects; shellgate.Gate gives each gate a private one.
	TempDir string
	// Vars are other variables the command's environment is known to have, so that
	// "$NAME/x" is a known path rather than one only known at run time.
	Vars map[string]string
	// Shell is the program that will run the line (a name or path: "bash",
	// "/bin/sh", "pwsh", `C:\Windows\System32\cmd.exe`); bash when empty.
	// Lines for PowerShell and cmd.exe are read by a conservative analyser of
	// their own; lines for zsh or fish always ask.
	Shell string
	// Terminal: the line runs on a pseudo-terminal as a job (tty), where
	// editors, pagers and REPLs work: the interactive rule does not apply.
	Terminal bool
	// TerminalJobs: the caller can run the line as a terminal job instead (a
	// session's tty, which an MCP connection has), so the interactive rule's
	// reason offers it; a one-shot run, the CLI and a hook cannot.
	TerminalJobs bool
}

// Verdict is the policy's decision about a whole command line.
type Verdict struct {
	Decision Decision `json:"decision"`
	// Rule is the id of the rule that decided, e.g. "catastrophic", "confinement",
	// "user.deny"; empty for a plain allow.
	Rule string `json:"rule,omitempty"`
	// Reason is written for the model: what was refused and what to do instead.
	Reason string `json:"reason,omitempty"`
	// Command is the offending sub-command's text; Line and Col its position.
	Command string `json:"command,omitempty"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	// SessionKey is, for ask, what a user can approve for the rest of a session:
	// the exact sub-command; the pattern of the user's ask rule that matched
	// ("npm publish *"); or, when the ask is about the program itself
	// (sandbox-escape, untrusted mode), a command prefix ("docker run"). It
	// must be shown with the question. Never a bare program name. Empty when the ask cannot be approved that way (text
	// only known at run time).
	SessionKey string `json:"session_key,omitempty"`
	// AllowPattern is, for ask, a user allow pattern ([policy] allow) that
	// lets exactly this command run without asking: its words, each a glob
	// matching only itself. Empty when none can be written (an
	// argument known only at run time, or one with spaces) and for the
	// user's own ask rules, which an allow pattern does not lift.
	AllowPattern string `json:"-"`
	// Commands is everything the line would run (for `shellgate check`).
	Commands []Command `json:"commands"`
	// ReadOnly: every command of the line only reads (the set untrusted mode
	// runs without asking), so it cannot change the project: no checkpoint is
	// needed before it.
	ReadOnly bool `json:"read_only,omitempty"`
	// Relaxed names the relaxed rules (Settings.Relax) that fired: without
	// them the decision could have been stricter.
	Relaxed []string `json:"relaxed,omitempty"`
	// Paths are the protected paths an ask names (rule protected-paths): what
	// the user is shown the command will create, which the sandbox then keeps
	// (read-only) instead of moving it to the quarantine.
	Paths []string `json:"paths,omitempty"`
}

// Unasked is an ask's reason once the asking is over, when what follows says it
// better (no one could be asked, the user declined): without the reason's
// "the user must approve it", so that the refusal says it once.
func (v Verdict) Unasked() string {
	r := strings.Replace(v.Reason, ": the user must approve it", "", 1)
	return strings.Replace(r, " The user must approve it.", "", 1)
}

// Engine judges command lines under one Settings. It is safe for concurrent use.
type Engine struct {
	s                Settings
	relaxed          map[string]bool
	allow, ask, deny []pattern
	writable         []string
	secrets          []string // Settings.Secrets, resolved
	dirsMu           sync.Mutex
	dirs             map[string]string // resolved Env directories
}

// New compiles s. It fails on a malformed pattern, an unknown mode or an unknown
// rule name in Relax.
func New(s Settings) (*Engine, error) {
	e := &Engine{s: s, relaxed: map[string]bool{}, dirs: map[string]string{}}
	switch s.Mode {
	case "", ModeAuto, ModeUntrusted, ModeNever:
	default:
		return nil, fmt.Errorf("policy: unknown approval mode %q (want %q, %q or %q)", s.Mode, ModeAuto, ModeUntrusted, ModeNever)
	}
	for _, r := range s.Relax {
		if r == RuleParse {
			return nil, fmt.Errorf("policy: rule %q cannot be relaxed: a command that does not parse is never run", r)
		}
		if fixed(r) {
			return nil, fmt.Errorf("policy: rule %q cannot be relaxed: it is not a built-in rule but the configuration's own patterns or a misconfiguration; change those instead", r)
		}
		if !isRule(r) {
			return nil, fmt.Errorf("policy: cannot relax unknown rule %q (known: %s)", r, strings.Join(ruleIDs(), ", "))
		}
		e.relaxed[r] = true
	}
	var err error
	if e.allow, err = compile("allow", s.Allow); err != nil {
		return nil, err
	}
	if e.ask, err = compile("ask", s.Ask); err != nil {
		return nil, err
	}
	if e.deny, err = compile("deny", s.Deny); err != nil {
		return nil, err
	}
	for _, p := range s.WritablePaths {
		if !strings.HasPrefix(p, "/") && !isWindowsAbs(p) {
			return nil, fmt.Errorf("policy: writable path %q is not absolute", p)
		}
		e.writable = append(e.writable, realpath.Resolve(p))
	}
	for _, p := range s.Secrets {
		if !strings.HasPrefix(p, "/") && !isWindowsAbs(p) {
			return nil, fmt.Errorf("policy: secret path %q is not absolute", p)
		}
	}
	if len(s.Secrets) > 0 {
		e.secrets = realpath.ResolveAll(s.Secrets) // the home's components looked at once
	}
	return e, nil
}

func isWindowsAbs(p string) bool {
	return len(p) > 2 && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

// Command is one simple command a line would run, as the analysis found it:
// its program, arguments, options, directory, redirections and the
// wrappers it was found behind. (The analysis itself is internal.)
type Command = analysis.Command

// Check decides about command run under env, with what Settings says
// contains commands (PrivateLoopback, Egress) as its Covers.
func (e *Engine) Check(command string, env Env) Verdict {
	return e.CheckApproved(command, env, nil)
}

// CheckApproved is Check for a session in which the user has already approved
// some session keys: an ask whose every asking sub-command has an approved key
// becomes allow. A deny stays a deny.
func (e *Engine) CheckApproved(command string, env Env, approved func(key string) bool) Verdict {
	return e.Judge(command, env).Verdict(Covers{PrivateLoopback: e.s.PrivateLoopback, Egress: e.s.Egress}, approved)
}

// Judge runs every rule over command once, keeping each hit: the verdict is
// taken from them (Judgement.Verdict) as often as what contains the command
// becomes known, without judging it again.
func (e *Engine) Judge(command string, env Env) *Judgement {
	for _, d := range []string{env.Root, env.Dir, env.Home, env.TempDir} {
		if d != "" && !strings.HasPrefix(d, "/") && !isWindowsAbs(d) || env.Root == "" {
			return &Judgement{fixed: &Verdict{Decision: Deny, Rule: RuleEnv, Command: command, Commands: []analysis.Command{},
				Reason: fmt.Sprintf("shellgate is misconfigured: the project root must be set and every directory absolute (root %q, dir %q, home %q, temp %q).", env.Root, env.Dir, env.Home, env.TempDir)}}
		}
	}
	x := &check{e: e, terminal: env.Terminal, terminalJobs: env.TerminalJobs}
	x.root = e.resolvedDir(env.Root)
	home := e.resolvedDir(env.Home)
	x.writable = e.writable
	vars := maps.Clone(env.Vars)
	if env.TempDir != "" {
		x.tempDir = true
		tmp := e.resolvedDir(env.TempDir)
		x.writable = append(append([]string(nil), e.writable...), tmp)
		// The command's environment points TMPDIR there (Env.TempDir's contract), so
		// writes to "$TMPDIR/x" are known to be writes to the temp dir.
		if vars == nil {
			vars = map[string]string{}
		}
		vars["TMPDIR"], vars["TMP"], vars["TEMP"] = tmp, tmp, tmp
	}
	if x.otherShell(command, familyOf(env.Shell)) {
		return &Judgement{x: x}
	}
	dir := env.Dir
	if dir == "" {
		dir = env.Root
	}
	a, err := analysis.Analyze(command, analysis.Options{Root: x.root, Dir: e.resolvedDir(dir), Home: home, Vars: vars, Resolve: x.resolve})
	if err != nil {
		v := Verdict{Decision: Deny, Rule: RuleParse, Command: command, Commands: []analysis.Command{},
			Reason: "The command was refused because it is not valid bash: " + err.Error() + " (rule parse). Fix the syntax and retry."}
		var perr syntax.ParseError
		var bad *analysis.NotUTF8
		if errors.As(err, &bad) {
			v.Line, v.Col = bad.Line, bad.Col
			v.Reason = fmt.Sprintf("The command was refused and nothing ran: %s, and the line also holds a character of U+F780 to U+F7FF, which stand for such bytes while shellgate reads the line (rule parse). Write that byte as $'\\x%02x', bash's own escape for it, and retry.", bad, bad.Byte)
		} else if errors.As(err, &perr) {
			v.Line, v.Col = int(perr.Pos.Line()), int(perr.Pos.Col())
		} else if errors.Is(err, analysis.ErrCost) {
			v.Reason = "The command was refused: " + err.Error() + " (rule parse). Split it into smaller, flatter commands."
		} else {
			v.Reason = "The command was refused: " + err.Error() + " (rule parse). Fix the command and retry."
		}
		return &Judgement{fixed: &v}
	}
	x.a, x.home = a, home
	x.judge()
	return &Judgement{x: x}
}

// resolvedDir resolves one of Env's directories; they rarely change, so the
// answers are kept.
func (e *Engine) resolvedDir(d string) string {
	if d == "" {
		return ""
	}
	e.dirsMu.Lock()
	r, ok := e.dirs[d]
	e.dirsMu.Unlock()
	if ok {
		return r
	}
	r = realpath.Resolve(d)
	if _, err := os.Stat(r); err == nil {
		e.dirsMu.Lock()
		if len(e.dirs) > 64 {
			clear(e.dirs)
		}
		e.dirs[d] = r
		e.dirsMu.Unlock()
	}
	return r
}

// hit is one rule firing on one sub-command.
type hit struct {
	decision Decision
	rule     string
	reason   string
	cmd      int // index in Analysis.Commands, or -1
	pos      analysis.Pos
	text     string
	key      string // session key, for ask
	allow    string // the allow pattern that covers it, for ask
	path     string // the protected path an ask names, if any
	// covered: what, besides its rule's own Covers, makes it moot.
	covered func(Covers) bool
	// beyondUndo: a lose-work hit a checkpoint does not make moot (rm -rf
	// of the whole root also deletes the ignored files checkpoints leave out).
	beyondUndo bool
	// fallback: only when no other hit of its command counts (rule
	// untrusted: a command no rule spoke about).
	fallback bool
}

// check is the state of one Check call.
type check struct {
	e        *Engine
	a        *analysis.Analysis
	root     string
	home     string
	writable []string
	cache    map[string]string
	hits     []hit
	cur      int // the command being judged
	netFed   []int8
	readOn   []bool // command i's output is read by another (printsForAnother), once asked
	netSrc   []int
	// written: the files the line writes (scripts), computed when first needed.
	written      map[string]string
	scriptsDone  bool
	terminal     bool // Env.Terminal
	terminalJobs bool // Env.TerminalJobs
	tempDir      bool // Env.TempDir is set: the command has a temp dir it may write
}

// verdict picks the hit that decides: deny over ask over allow, the first of
// each, leaving out what is relaxed or what c covers.
func (x *check) verdict(c Covers, approved func(string) bool) Verdict {
	v := Verdict{Decision: Allow, Commands: x.a.Commands, ReadOnly: x.readOnly()}
	var best *hit
	var asksPaths []*hit    // the hits that count and name a protected path
	var counts map[int]bool // commands with a hit that counts, where a fallback asks
	passes := 1
	for i := range x.hits {
		if x.hits[i].fallback {
			counts, passes = map[int]bool{}, 2 // the fallbacks once the rest is known
			break
		}
	}
	for pass := range passes {
		for i := range x.hits {
			h := &x.hits[i]
			if h.fallback != (pass == 1) {
				continue
			}
			if h.fallback && counts[h.cmd] {
				continue
			}
			if x.e.relaxed[h.rule] || c.cover(h) {
				if h.decision != Allow && !slices.Contains(v.Relaxed, h.rule) {
					v.Relaxed = append(v.Relaxed, h.rule)
				}
				continue
			}
			if counts != nil {
				counts[h.cmd] = true
			}
			if h.decision == Ask && approved != nil && h.key != "" && approved(h.key) {
				continue
			}
			x.consider(h, &best)
			if h.path != "" {
				asksPaths = append(asksPaths, h)
			}
		}
	}
	return x.decide(v, best, asksPaths)
}

// consider makes h the best hit if it decides before *best.
func (x *check) consider(h *hit, best **hit) {
	// The user's own rule, when it fires, explains the decision best; then
	// remote-code, the most specific (curl … | sudo sh is remote-code before
	// it is network or privilege).
	b := *best
	if b == nil || h.decision.rank() > b.decision.rank() ||
		h.decision == b.decision && isUserRule(h.rule) && !isUserRule(b.rule) ||
		h.decision == b.decision && h.rule == RuleRemoteCode && !isUserRule(b.rule) && b.rule != RuleRemoteCode {
		*best = h
	}
}

// decide fills v from the best hit; withPaths are the hits that count and name
// a protected path, of which those of best's command and key are one question.
func (x *check) decide(v Verdict, best *hit, withPaths []*hit) Verdict {
	if best == nil || best.decision == Allow {
		return v
	}
	v.Decision, v.Rule, v.Reason = best.decision, best.rule, best.reason
	v.Command, v.Line, v.Col = best.text, best.pos.Line, best.pos.Col
	switch {
	case best.decision == Ask && x.e.s.Mode == ModeNever:
		v.Decision = Deny
		v.Reason = noApproval(v.Reason) + " Approval mode is \"never\", so it cannot be approved; do it another way or ask the user to run it."
	case best.decision == Ask:
		v.SessionKey, v.AllowPattern = best.key, best.allow
		if best.path != "" {
			// The command writes each: the question names every one, and
			// an approval keeps exactly those (the first is in the reason).
			v.Paths = []string{best.path}
			for _, h := range withPaths {
				if h.decision == Ask && h.rule == best.rule && h.cmd == best.cmd && h.key == best.key && !slices.Contains(v.Paths, h.path) {
					v.Paths = append(v.Paths, h.path)
				}
			}
			if len(v.Paths) > 1 {
				v.Reason += fmt.Sprintf(" It would also write %s, protected the same way.", strings.Join(v.Paths[1:], ", "))
			}
		}
	}
	return v
}

// readOnly reports a line whose every command only reads.
func (x *check) readOnly() bool {
	if x.a == nil || len(x.a.Findings) > 0 || len(x.a.Commands) == 0 {
		return false
	}
	for i := range x.a.Commands {
		if !safe(&x.a.Commands[i]) {
			return false
		}
	}
	return true
}

// add records a hit on the command being judged.
func (x *check) add(d Decision, rule, reason string) {
	c := &x.a.Commands[x.cur]
	x.hits = append(x.hits, hit{decision: d, rule: rule, reason: reason, cmd: x.cur, pos: c.Pos, text: c.Source, key: sessionKey(rule, c), allow: allowPattern(rule, c)})
}

func (x *check) deny(rule, format string, args ...any) {
	x.add(Deny, rule, fmt.Sprintf(format, args...))
}
func (x *check) ask(rule, format string, args ...any) { x.add(Ask, rule, fmt.Sprintf(format, args...)) }

// askWrite asks about a command that writes the protected path, which the
// question names.
func (x *check) askWrite(path, format string, args ...any) {
	x.ask(RuleProtected, format, args...)
	x.hits[len(x.hits)-1].path = path
}

func isUserRule(r string) bool { return strings.HasPrefix(r, "user.") }

// noApproval takes the user's approval out of an ask's reason, for where none
// can be given (approval mode "never"): "… (rule dynamic): the user must
// approve it. Run that program directly instead." becomes "… (rule dynamic).
// Run that program directly instead.", so that the reason does not ask for an
// approval the next sentence says cannot be given.
func noApproval(reason string) string {
	for _, clause := range []string{": the user must approve it", ". The user must approve it"} {
		i := strings.Index(reason, clause)
		if i < 0 {
			continue
		}
		rest := reason[i+len(clause):]
		switch {
		case strings.HasPrefix(rest, "; ") && len(rest) > 2:
			// "… ; work with the project's files instead." starts a sentence.
			r, size := utf8.DecodeRuneInString(rest[2:])
			rest = ". " + string(unicode.ToUpper(r)) + rest[2+size:]
		case strings.HasPrefix(rest, ","):
			continue // a clause that goes on: leave it whole
		}
		return reason[:i] + rest
	}
	return reason
}
