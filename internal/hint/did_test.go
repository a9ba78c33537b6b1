package hint

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDidNotes: what the model reads of the paths the sandbox moved, for one
// path and for several.
func TestDidNotes(t *testing.T) {
	q := "/p/.shellgate-quarantine/20261129-142610-f11935fe"
	tests := []struct {
		name string
		did  Did
		want []string
	}{
		{"one made", Did{Root: "/p", Quarantined: []string{"/p/.vscode → .shellgate-quarantine/20261129-142610-f11935fe/.vscode"}},
			[]string{"Moved .vscode to .shellgate-quarantine/ (read-only there): this command made it where tools outside the sandbox run it. The user can review and move it back; approved commands keep what they make."}},
		{"two made", Did{Root: "/p", Quarantined: []string{"/p/.vscode → .shellgate-quarantine/x/.vscode", "/p/.envrc → .shellgate-quarantine/x/.envrc"}},
			[]string{"Moved .vscode, .envrc to .shellgate-quarantine/ (read-only there): this command made them where tools outside the sandbox run them. The user can review and move them back; approved commands keep what they make."}},
		{"made by a job before", Did{Root: "/p", Before: []string{"/p/.envrc → " + q[3:] + "/.envrc"}},
			[]string{"Since the last command, a job of this session made a protected path the sandbox could not guard while it was written: moved .envrc to .shellgate-quarantine/ (read-only there). The user can review it and move it back."}},
		{"nothing", Did{Root: "/p"}, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.did.Notes()); diff != "" {
			t.Errorf("%s: notes (-want +got):\n%s", tt.name, diff)
		}
	}
}
