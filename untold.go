package shellgate

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/audit"
	"github.com/shellgate/shellgate/internal/quarantinelog"
)

// untold is what an earlier session in the root moved into the quarantine
// that no envelope told (internal/quarantinelog), until a command's envelope
// tells it.
type untold struct {
	mu   sync.Mutex
	note string
}

// quarantineLog is the root's quarantine log in shellgate's state, "" when
// there is no state directory.
func quarantineLog(root string) string {
	log, err := audit.DefaultPath()
	if err != nil {
		return ""
	}
	return quarantinelog.Path(filepath.Join(filepath.Dir(log), "quarantine"), root)
}

// takeUntold reads the root's quarantine log as a session starts, before any
// command of it runs: audited now, told by the next envelope. Only the
// sandbox's helper writes the log, so what it says no command wrote.
func (g *Gate) takeUntold(log string) {
	if log == "" {
		return
	}
	// What was read is told even if the log could not be emptied after.
	entries, _ := quarantinelog.Take(log)
	if len(entries) == 0 {
		return
	}
	var moved, names []string
	rel := func(p string) string {
		if r, err := filepath.Rel(g.root, p); err == nil && filepath.IsLocal(r) {
			return r
		}
		return p
	}
	for _, e := range entries {
		moved = append(moved, rel(e.From)+" → "+rel(e.To))
		names = append(names, rel(e.From)+" to "+rel(e.To))
	}
	g.untold.mu.Lock()
	g.untold.note = fmt.Sprintf("When shellgate last ended in this project (killed while a command ran, or closed while a job ran), the sandbox moved what commands had made where tools outside the sandbox run them, and no one was told: %s. The user can review them and move them back.", strings.Join(names, ", "))
	g.untold.mu.Unlock()
	if g.auditLog != nil {
		g.auditLog.Write(audit.Entry{Event: audit.EventQuarantined, Time: time.Now().UTC(), Root: g.root, Moved: moved})
	}
}

// noteUntold tells, in env, what takeUntold found, once.
func (g *Gate) noteUntold(env *envelope.Envelope) {
	g.untold.mu.Lock()
	note := g.untold.note
	g.untold.note = ""
	g.untold.mu.Unlock()
	if note != "" {
		env.Note(note)
		env.Settle()
	}
}
