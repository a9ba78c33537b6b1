package hint

import (
	"slices"
	"testing"
)

func TestAppearedNotes(t *testing.T) {
	tests := []struct {
		name string
		a    Appeared
		want []string
	}{
		{name: "nothing"},
		{
			name: "a repository",
			a:    Appeared{Repos: []string{"vendor/lib"}},
			want: []string{"New git repository in the project: vendor/lib — the user's git will run its config and hooks: review them before running git there."},
		},
		{
			name: "more than five protected entries are counted",
			a:    Appeared{Protected: []string{"a/.envrc", "b/.envrc", "c/.envrc", "d/.envrc", "e/.envrc", "f/.envrc", "g/.envrc"}},
			want: []string{"New in a subdirectory: a/.envrc, b/.envrc, c/.envrc, d/.envrc, e/.envrc and 2 more — tools started there run what it says: review it first."},
		},
		{
			name: "both, repositories first",
			a:    Appeared{Repos: []string{"x"}, Protected: []string{"x/.vscode"}},
			want: []string{
				"New git repository in the project: x — the user's git will run its config and hooks: review them before running git there.",
				"New in a subdirectory: x/.vscode — tools started there run what it says: review it first.",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.a.Notes(); !slices.Equal(got, tt.want) {
				t.Errorf("Notes = %q, want %q", got, tt.want)
			}
		})
	}
}
