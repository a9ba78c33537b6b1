package shellgate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/shellgate/shellgate/internal/home"
	"github.com/shellgate/shellgate/internal/sandbox"
	"github.com/shellgate/shellgate/internal/shell"
	"github.com/shellgate/shellgate/internal/tempdir"
)

// makeTemp sets up the commands' temp dir: one the user configured, else the
// sandbox session's own /tmp, else a private directory that Close removes.
func (g *Gate) makeTemp() error {
	dir := g.cfg.TempDir
	if dir == "" {
		dir = g.cfg.Env["TMPDIR"] // a TMPDIR the user configured is the commands' temp dir
	}
	if dir == "" && g.sessionTmp() {
		g.setTemp(sandbox.SessionTemp(g.root), false)
		return nil
	}
	own := false
	if dir == "" {
		d, err := tempdir.New()
		if err != nil {
			return fmt.Errorf("temp dir for commands: %w", err)
		}
		dir, own = d, true
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return fmt.Errorf("temp dir %q: %w", dir, err)
	}
	g.setTemp(abs, own)
	return nil
}

// setTemp points the commands' TMPDIR, TMP and TEMP at dir.
func (g *Gate) setTemp(dir string, own bool) {
	// MYCODEAGENT=1 tells scripts an agent runs them (seed 001 §5.6), so that
	// they can turn interactive prompts off.
	extra := map[string]string{"TMPDIR": dir, "TMP": dir, "TEMP": dir, "MYCODEAGENT": "1"}
	if c := g.cfg.Sandbox; g.sessionTmp() && c.Profile != sandbox.ReadOnly && !c.NoCaches {
		// The sandbox refuses every .pyc in the root (docs/sandbox.md): the
		// session's Python keeps its caches in a tool cache of the
		// project's own instead, where the next run and session find them.
		extra["PYTHONPYCACHEPREFIX"] = filepath.Join(g.childHome(), home.PythonCache)
	}
	for k, v := range g.cfg.Env { // the user's variables win
		extra[k] = v
	}
	g.tmpMu.Lock()
	defer g.tmpMu.Unlock()
	g.tmp, g.ownTmp = dir, own
	g.env = shell.EnvOptions{Extra: extra, KeepSecrets: g.cfg.KeepEnv, KeepAllSecrets: g.cfg.KeepSecrets}
	g.built.Store(nil)
}

// temp returns the commands' temp dir and environment options.
func (g *Gate) temp() (string, shell.EnvOptions) {
	g.tmpMu.RLock()
	defer g.tmpMu.RUnlock()
	return g.tmp, g.env
}

// childEnv is the commands' environment, and the secrets stripped from it.
// Both are shared between calls: read them, copy to change.
func (g *Gate) childEnv() ([]string, map[string]string) {
	b := g.builtEnv()
	return g.egressEnv(b.env), b.secrets
}

// builtEnv is what shell.Env and shell.Secrets make of the process's
// environment, built again only when that environment changed (os.Environ's
// strings are the same ones call after call, so telling is cheap): every
// call needs it, and building it (every variable looked at for secrets) was
// much of a call's own work.
type builtEnv struct {
	base    []string
	env     []string // clipped: an append copies
	secrets map[string]string
}

func (g *Gate) builtEnv() *builtEnv {
	base := os.Environ()
	if b := g.built.Load(); b != nil && slices.Equal(b.base, base) {
		return b
	}
	g.tmpMu.RLock()
	envOpts := g.env
	b := &builtEnv{base: base, env: slices.Clip(shell.Env(base, envOpts)), secrets: shell.Secrets(base, envOpts)}
	g.built.Store(b) // under the lock: setTemp cannot reset it in between
	g.tmpMu.RUnlock()
	return b
}
