package hint

import (
	"fmt"
	"strings"
)

// Appeared is what appeared below the root's top since the last command was
// told, with paths relative to the root.
type Appeared struct {
	Repos     []string // new git repositories' directories
	Protected []string // new entries of the protected table in subdirectories
}

// maxNamed is how many paths a note names.
const maxNamed = 5

// Notes says what appeared and why to review it, in a line or two.
func (a Appeared) Notes() []string {
	var notes []string
	if len(a.Repos) > 0 {
		notes = append(notes, fmt.Sprintf("New git repository in the project: %s — the user's git will run its config and hooks: review them before running git there.", named(a.Repos)))
	}
	if len(a.Protected) > 0 {
		notes = append(notes, fmt.Sprintf("New in a subdirectory: %s — tools started there run what it says: review it first.", named(a.Protected)))
	}
	return notes
}

// named lists the first maxNamed paths and counts the rest.
func named(ps []string) string {
	s := strings.Join(ps[:min(len(ps), maxNamed)], ", ")
	if len(ps) > maxNamed {
		s += fmt.Sprintf(" and %d more", len(ps)-maxNamed)
	}
	return s
}
