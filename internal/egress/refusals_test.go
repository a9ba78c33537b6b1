package egress

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// The refusals since a command started, each target once; only the latest
// are kept.
func TestRefusals(t *testing.T) {
	var r Refusals
	start := time.Now()
	for _, ev := range []Event{{Domain: "a.invalid", Port: 443}, {Domain: "10.0.0.1", Port: 80}, {Domain: "a.invalid", Port: 443}, {Domain: "::1", Port: 22}} {
		r.Note(ev)
	}
	if got, want := r.Since(start), []string{"a.invalid:443", "10.0.0.1:80", "[::1]:22"}; !slices.Equal(got, want) {
		t.Errorf("Since(start) = %q, want %q", got, want)
	}
	if got := r.Since(time.Now().Add(time.Hour)); len(got) != 0 {
		t.Errorf("refusals from the future: %q", got)
	}
	for i := range 20 {
		r.Note(Event{Domain: fmt.Sprintf("d%d.invalid", i), Port: 443})
	}
	got := r.Since(start)
	if len(got) != maxRefusals || got[0] != "d4.invalid:443" || got[len(got)-1] != "d19.invalid:443" {
		t.Errorf("after 24 refusals: %q, want the latest %d", got, maxRefusals)
	}
}
