// Package policy decides, before anything runs, whether a shell command is allowed,
// needs approval, or is refused: allow / ask / deny, from the real syntax tree that
// package analysis extracts, with a named rule and a reason written for the model.
package policy

// Mode is the approval mode (as in Codex).
type Mode string

const (
	// ModeAuto allows whatever no rule denies or asks about. The default.
	ModeAuto Mode = "auto"
	// ModeUntrusted asks for anything outside a known read-only safe set.
	ModeUntrusted Mode = "untrusted"
	// ModeNever turns every ask into a deny: for CI and unattended runs.
	ModeNever Mode = "never"
)

// Settings is the user-configurable part of the policy. The zero value is the
// built-in default policy in ModeAuto with the network off.
type Settings struct {
	Mode Mode
	// Allow, Ask and Deny are command prefix patterns matched token by token after
	// unwrapping, e.g. "git push --force *", "npm publish *", "make *".
	Allow []string
	Ask   []string
	Deny  []string
	// Relax names built-in rules to switch off (e.g. "network", "interactive").
	// A built-in rule is relaxed only by naming it.
	Relax []string
	// Network allows network clients (curl, wget, ssh, …). Remote-code patterns such
	// as "curl … | sh" stay denied unless their own rule is relaxed.
	Network bool
	// Egress: with the network off, commands reach the network only through
	// shellgate's allow-listing proxy, which decides per domain; the network
	// rule then stops judging by program names. Remote-code patterns such as
	// "curl … | sh" stay denied.
	Egress bool
	// PrivateLoopback: commands run in a network namespace of their own, whose
	// loopback holds only their own servers (the sandbox), so an HTTP client
	// that only talks to loopback is not network use. Without it the host's
	// loopback may lead anywhere (a tunnel, a proxy) and is network like the rest.
	PrivateLoopback bool
	// WritablePaths are absolute paths outside the project root that commands may
	// write to (the temp dir is always one).
	WritablePaths []string
	// DedicatedTools denies ls, cat, head, tail, grep, find and rg with a hint to use
	// the agent's own read and search tools (seed 001 §5.4).
	DedicatedTools bool
	// Unconfined: no sandbox will contain the commands, as when a hook's agent
	// runs them in its own shell. What the policy otherwise leaves to the
	// sandbox is then asked about: a program given on the command line, which
	// the policy does not read (python3 -c, perl -e, node -e …; rule
	// code-execution), and reading Secrets (rule secrets).
	Unconfined bool
	// Secrets are absolute paths where credentials are kept (the sandbox's
	// hidden paths: ~/.ssh, ~/.aws …). With Unconfined, a command that names
	// one, a path in one, or (reading recursively) a directory holding one is
	// asked about.
	Secrets []string
}
