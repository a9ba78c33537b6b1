package shellgate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/shellgate/shellgate/policy"
)

// A Checker decides requests by the policy alone. It sets up none of what a Gate
// needs to run commands — no temp dir, no spill sweep, no process supervision, and
// nothing to Close — so that a hook, which answers before every command an agent
// runs and runs nothing itself, costs a configuration read and a parse.
type Checker struct {
	root, home string
	policy     *policy.Engine
}

// NewChecker checks cfg.Root and cfg.Policy as New does.
func NewChecker(cfg Config) (*Checker, error) {
	root, err := resolveRoot(cfg.Root)
	if err != nil {
		return nil, err
	}
	return newChecker(root, cfg.Policy)
}

// newChecker is the policy part of a Gate, for a root already resolved.
func newChecker(root string, p policy.Settings) (*Checker, error) {
	eng, err := policy.New(p)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	home, _ := os.UserHomeDir()
	return &Checker{root: root, home: home, policy: eng}, nil
}

// Root is the project root, absolute and free of symlinks.
func (c *Checker) Root() string { return c.root }

// Check returns the verdict Gate.Check would give, except that no private temp dir
// is writable: the command will run in the agent's own shell, with its temp dir.
func (c *Checker) Check(req Request) Verdict {
	abs, _, err := resolveDir(c.root, req.Directory)
	if err != nil {
		return dirVerdict(err.(*dirError))
	}
	return verdict(c.policy.Check(req.Command, policy.Env{Root: c.root, Dir: abs, Home: c.home}))
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
	f, err := os.Open(root)
	if err != nil {
		return "", fmt.Errorf("project root %q is not readable: %w", dir, err)
	}
	f.Close()
	return root, nil
}
