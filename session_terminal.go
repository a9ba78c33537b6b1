package shellgate

import (
	"fmt"
	"os"
	"time"

	"github.com/shellgate/shellgate/internal/jobs"
	"github.com/shellgate/shellgate/internal/terminal"
)

// Terminal jobs get a screen this large, and keep this many lines above it.
const (
	terminalCols       = 120
	terminalRows       = 40
	terminalScrollback = 2000
	// terminalDrain is how long a terminal job's end waits for the output still
	// in the terminal (longer only if a background process keeps it open).
	terminalDrain = 200 * time.Millisecond
)

// startTerminal starts the command on a pseudo-terminal: what it prints is
// kept raw in the job's log and rendered on a screen, which reads return.
func (c *call) startTerminal(req Request) (*jobs.Job, error) {
	master, slave, renewed, err := c.s.sup.OpenTerminal(terminalCols, terminalRows)
	if err != nil {
		return nil, err
	}
	env, secrets := c.s.g.childEnv()
	job, jctx, err := c.newJob(req, nopCloser{master}, secrets)
	if err != nil {
		master.Close()
		slave.Close()
		return nil, err
	}
	screen := terminal.New(terminalCols, terminalRows, terminalScrollback, master)
	job.Screen = func(lines int) string {
		if lines > 0 {
			return screen.Scrollback(lines)
		}
		return screen.Text()
	}
	drained := make(chan struct{})
	pump := terminal.NewPump(master, job.Stdout)
	c.printed = pump.Drained
	go func() {
		defer close(drained)
		job.Stdout.Tee(screen) // the screen shows what the log keeps: secrets redacted
		pump.Run()             // until EIO: the terminal is closed
	}()
	go func() {
		<-job.Done()
		<-drained
		screen.Close()
		master.Close()
	}()
	spec := c.s.spec(c.a, req.Command, c.s.exports.Apply(env), nil, nil, nil)
	spec.Terminal, spec.TerminalNote = slave, renewed // a new sandbox session: the model is told
	spec.Env = append(spec.Env, "TERM=xterm-256color", fmt.Sprintf("COLUMNS=%d", terminalCols), fmt.Sprintf("LINES=%d", terminalRows))
	c.run(jctx, job, spec, master, drained)
	return job, nil
}

// nopCloser keeps a terminal open when its job's input is "closed": the
// screen reader owns it.
type nopCloser struct{ *os.File }

func (nopCloser) Close() error { return nil }
