package shellgate

import (
	"fmt"
	"os"
	"path/filepath"

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
	for k, v := range g.cfg.Env { // the user's variables win
		extra[k] = v
	}
	g.tmpMu.Lock()
	defer g.tmpMu.Unlock()
	g.tmp, g.ownTmp = dir, own
	g.env = shell.EnvOptions{Extra: extra, KeepSecrets: g.cfg.KeepEnv, KeepAllSecrets: g.cfg.KeepSecrets}
}

// temp returns the commands' temp dir and environment options.
func (g *Gate) temp() (string, shell.EnvOptions) {
	g.tmpMu.RLock()
	defer g.tmpMu.RUnlock()
	return g.tmp, g.env
}

// childEnv is the commands' environment, and the secrets stripped from it.
func (g *Gate) childEnv() ([]string, map[string]string) {
	_, envOpts := g.temp()
	base := os.Environ()
	return g.egressEnv(shell.Env(base, envOpts)), shell.Secrets(base, envOpts)
}
