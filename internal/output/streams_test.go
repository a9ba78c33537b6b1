package output

import (
	"bytes"
	"errors"
	"slices"
	"testing"
)

func TestDigestText(t *testing.T) {
	out := Result{Digest: []Line{{N: 7, Text: "error: one"}}}
	errOut := Result{Digest: []Line{{N: 2, Text: "warning: two"}, {N: 9, Text: "FAIL three"}}}
	want := "stdout line 7: error: one\nstderr line 2: warning: two\nstderr line 9: FAIL three"
	if got := DigestText(out, errOut); got != want {
		t.Errorf("DigestText = %q, want %q", got, want)
	}
	if got := DigestText(Result{}, Result{}); got != "" {
		t.Errorf("DigestText of no digest = %q, want empty", got)
	}
}

func TestSpills(t *testing.T) {
	tests := []struct {
		name           string
		stdout, stderr Result
		first          string
		notes          []Note
	}{
		{name: "none"},
		{name: "stderr only", stderr: Result{SpillPath: "/s/err"}, first: "/s/err"},
		{
			name:   "both: the second is a note",
			stdout: Result{SpillPath: "/s/out"}, stderr: Result{SpillPath: "/s/err"},
			first: "/s/out", notes: []Note{{"Full stderr: /s/err", "/s/err"}},
		},
		{
			name:   "capped and failed",
			stdout: Result{SpillPath: "/s/out", SpillCapped: true, SpillSize: 10, Total: 99},
			stderr: Result{SpillErr: errors.New("disk full")},
			first:  "/s/out",
			notes: []Note{
				{Text: "Full stdout file stopped at 10 bytes (a file's cap, or the session's for all its files); 99 bytes were printed in all."},
				{Text: "Full stderr could not be saved: disk full"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, notes := Spills(tt.stdout, tt.stderr)
			if first != tt.first || !slices.Equal(notes, tt.notes) {
				t.Errorf("Spills = %q, %q; want %q, %q", first, notes, tt.first, tt.notes)
			}
		})
	}
}

func TestDetachable(t *testing.T) {
	var b bytes.Buffer
	d := NewDetachable(&b)
	if n, err := d.Write([]byte("kept ")); n != 5 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	d.Detach()
	if n, err := d.Write([]byte("dropped")); n != 7 || err != nil {
		t.Fatalf("Write after Detach = %d, %v; want all of it taken, no error", n, err)
	}
	if b.String() != "kept " {
		t.Errorf("passed on %q, want only what came before Detach", b.String())
	}
}
