package terminal

import (
	"strings"
	"testing"
	"time"
)

// A huge count in a control sequence does a bounded amount of work: REP
// (ESC[999999999b, repeat the last character) used to print it a billion times
// under the screen's lock, pinning a CPU for hours in the server, and the job
// printing it could not be killed meanwhile. The screen then looks as a real
// terminal's would.
func TestHugeCountsAreBounded(t *testing.T) {
	const cols, rows = 20, 5
	for _, tc := range []struct{ name, in, want string }{
		{"REP", "a\x1b[999999999b", strings.Repeat(strings.Repeat("a", cols)+"\n", rows-1) + strings.Repeat("a", cols)},
		{"REP small", "x\x1b[4b", "xxxxx"},
		{"REP with more parameters", "y\x1b[999999999;5b", strings.Repeat(strings.Repeat("y", cols)+"\n", rows-1) + strings.Repeat("y", cols)},
		{"CHT", "a\x1b[999999999Ib", "a" + strings.Repeat(" ", cols-2) + "b"},
		{"CBT", "abcdefghij\x1b[999999999Zk", "kbcdefghij"},
		{"ECH", "abcdef\r\x1b[999999999X", ""},
		{"ICH, DCH, IL, DL, SU, SD", "abc\r\x1b[999999999@\x1b[999999999P\x1b[999999999L\x1b[999999999M\x1b[999999999S\x1b[999999999Tz", "z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(cols, rows, 10, nil)
			done := make(chan struct{})
			go func() {
				defer close(done)
				s.Write([]byte(tc.in))
			}()
			select {
			case <-done:
			case <-time.After(20 * time.Second): // a hang, not a speed limit
				t.Fatalf("writing %q did not return", tc.in) // (and Close would wait for it)
			}
			defer s.Close()
			if got := s.Text(); got != tc.want {
				t.Errorf("screen after %q:\n%q\nwant\n%q", tc.in, got, tc.want)
			}
		})
	}
}
