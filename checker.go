package shellgate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/shellgate/shellgate/internal/protect"
	"github.com/shellgate/shellgate/internal/sandbox"
	"github.com/shellgate/shellgate/policy"
)

// A Checker decides requests by the policy alone. It sets up none of what a Gate
// needs to run commands — no temp dir, no spill sweep, no process supervision, and
// nothing to Close — so that a hook, which answers before every command an agent
// runs and runs nothing itself, costs a configuration read and a parse.
type Checker struct {
	root, home string
	policy     *policy.Engine
	// covers are what will contain the commands besides the policy, as in
	// the Gate (NewGateChecker): their hits are dropped from the verdict.
	covers  policy.Covers
	tempDir string // the commands' temp dir, when known ahead (NewGateChecker)
}

// NewChecker returns a Checker for commands that no sandbox of shellgate's will
// contain: a hook's, whose agent runs them in its own shell. It checks cfg.Root
// and cfg.Policy as New does and decides with policy.Settings.Unconfined: what
// a sandbox would have contained is asked about — a program given on the command
// line (python3 -c, perl -e …) and reading the secrets the sandbox hides
// (DefaultHidden and cfg.Sandbox.Hide).
func NewChecker(cfg Config) (*Checker, error) {
	root, err := resolveRoot(cfg.Root)
	if err != nil {
		return nil, err
	}
	return newChecker(root, unconfined(cfg.Policy, cfg.Sandbox.Hide))
}

// NewGateChecker returns a Checker that decides as the Gate New(cfg) would: for
// commands that shellgate itself will run, as `shellgate exec` runs an agent's
// commands when it is the agent's shell prefix. Where that Gate will have a
// sandbox, the hits the sandbox contains are dropped as in the Gate; where it
// will not, the Checker decides as NewChecker's.
func NewGateChecker(cfg Config) (*Checker, error) {
	root, err := resolveRoot(cfg.Root)
	if err != nil {
		return nil, err
	}
	wanted, err := sandboxWanted(&cfg.Sandbox)
	if err != nil {
		return nil, err
	}
	if !wanted {
		return newChecker(root, unconfined(cfg.Policy, cfg.Sandbox.Hide))
	}
	c, err := newChecker(root, cfg.Policy)
	if err != nil {
		return nil, err
	}
	// As plannedCovers; the checkpoints are left out: the Gate asks again
	// about what undo does not cover, and an ask here is noted for it.
	c.covers = policy.Covers{Sandbox: true, PrivateLoopback: runtime.GOOS == "linux", Egress: egressWanted(cfg, true)}
	if runtime.GOOS == "linux" && cfg.TempDir == "" && cfg.Env["TMPDIR"] == "" {
		c.tempDir = sandbox.SessionTemp(root) // the session's own /tmp, as makeTemp has it
	}
	return c, nil
}

// unconfined is p for commands no sandbox contains.
func unconfined(p policy.Settings, hide []string) policy.Settings {
	home, _ := os.UserHomeDir()
	p.Unconfined = true
	if home != "" {
		p.Secrets = protect.SecretPaths(home, append(protect.Unshown(), hide...))
	}
	return p
}

// newChecker is the policy part of a Gate, for a root already resolved.
func newChecker(root string, p policy.Settings) (*Checker, error) {
	eng, err := policy.New(p)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	home, _ := os.UserHomeDir()
	return &Checker{root: root, home: home, policy: eng, covers: policy.Covers{PrivateLoopback: p.PrivateLoopback, Egress: p.Egress}}, nil
}

// Root is the project root, absolute and free of symlinks.
func (c *Checker) Root() string { return c.root }

// Check returns the verdict Gate.Check would give, except that no private temp dir
// is writable unless the Gate's is known ahead (a sandbox's own /tmp): otherwise
// the command runs with a temp dir that is not known here.
func (c *Checker) Check(req Request) Verdict {
	abs, _, err := resolveDir(c.root, req.Directory)
	if err != nil {
		return dirVerdict(err)
	}
	return verdict(c.policy.Judge(req.Command, policy.Env{Root: c.root, Dir: abs, Home: c.home, TempDir: c.tempDir}).Verdict(c.covers, nil))
}

// resolveRoot makes the project root absolute and free of symlinks, and checks that
// it is a readable directory. Empty means the current directory.
func resolveRoot(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("project root: cannot read the current directory: %w", err)
		}
		dir = wd
	}
	root, err := filepath.Abs(dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return "", fmt.Errorf("project root %q: %w", dir, errors.Unwrap(err))
	}
	if fi, err := os.Stat(root); err != nil {
		return "", fmt.Errorf("project root %q: %w", dir, err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("project root %q is not a directory", dir)
	}
	if err := openDir(root); err != nil {
		return "", fmt.Errorf("project root %q is not readable: %w", dir, &os.PathError{Op: "open", Path: root, Err: err})
	}
	return root, nil
}
