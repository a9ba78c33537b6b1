package hint

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/shellgate/shellgate/internal/protect"
)

// Did is what the sandbox did around one command, for the notes of its
// envelope. Paths are absolute; moves read "path → where".
type Did struct {
	Root string
	// Before: protected paths a job made since the last command, moved aside
	// at this command's start.
	Before []string
	// Quarantined: those this command made, moved aside at its end.
	Quarantined []string
	// Removed: what was undone in .git (symlinks, index flags, todo lists).
	Removed []string
	// Unkept: what could not be made read-only, each with why.
	Unkept []string
	// Protected: what this command made that an approval keeps, read-only.
	Protected []string
}

// Notes says what the sandbox did: the protected paths the command created
// (the sandbox could act on them only once it had ended, so what is in them
// is the command's doing; those the user did not approve are moved to the
// quarantine), what it undid in .git, what it could not make read-only.
func (l Did) Notes() []string {
	rel := func(p string) string {
		if r, err := filepath.Rel(l.Root, p); err == nil && l.Root != "" && filepath.IsLocal(r) {
			return r
		}
		return p
	}
	// "a, b to .shellgate-quarantine/" when each went into the quarantine
	// (a dated directory of its own there), else where each went.
	moved := func(list []string) string {
		var names, each []string
		into := ""
		for _, m := range list {
			from, to, _ := strings.Cut(m, " → ")
			names, each = append(names, rel(from)), append(each, rel(from)+" to "+to)
			q, _, ok := strings.Cut(to, "/")
			if ok && !strings.HasPrefix(filepath.Base(to), protect.QuarantinedPrefix) && (into == "" || into == q) {
				into = q
			} else {
				into = "-" // beside itself (see mounter.quarantine), or mixed
			}
		}
		if into != "-" && into != "" {
			return strings.Join(names, ", ") + " to " + into + "/"
		}
		return strings.Join(each, ", ")
	}
	var notes []string
	if len(l.Before) > 0 {
		notes = append(notes, fmt.Sprintf("Since the last command, a job of this session made a protected path the sandbox could not guard while it was written: moved %s (read-only there). The user can review it and move it back.", moved(l.Before)))
	}
	if len(l.Quarantined) > 0 {
		it := "it"
		if len(l.Quarantined) > 1 {
			it = "them"
		}
		notes = append(notes, fmt.Sprintf("Moved %s (read-only there): this command made %s where tools outside the sandbox run %[2]s. The user can review and move %[2]s back; approved commands keep what they make.", moved(l.Quarantined), it))
	}
	if len(l.Removed) > 0 {
		notes = append(notes, fmt.Sprintf("Undid in .git what git on the host would act on outside the sandbox: %s.", strings.Join(l.Removed, "; ")))
	}
	if len(l.Unkept) > 0 {
		notes = append(notes, fmt.Sprintf("The sandbox could not make these read-only, so commands can change them: %s. The user's own git or tools run what is written there: review them before using them outside the sandbox.", strings.Join(l.Unkept, "; ")))
	}
	if len(l.Protected) > 0 {
		names := make([]string, len(l.Protected))
		for i, p := range l.Protected {
			names[i] = rel(p)
		}
		notes = append(notes, fmt.Sprintf("This command created %s, which the sandbox protects only from now on (read-only): review before using it outside the sandbox.", strings.Join(names, ", ")))
	}
	return notes
}
