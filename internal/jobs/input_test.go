package jobs

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/shellgate/shellgate/internal/runner"
)

// input is a job's input as the tests see it: what was written, and whether
// it was closed.
type input struct {
	bytes.Buffer
	closed bool
}

func (in *input) Close() error { in.closed = true; return nil }

// typing is a job reading in; it ends with the test.
func typing(t *testing.T, tty bool, in *input, interrupt func() error) *Job {
	t.Helper()
	tab := NewTable(Limits{})
	j, err := tab.New(Spec{TTY: tty, Input: in, Interrupt: interrupt, LogDir: t.TempDir(), LogMax: 1 << 20, Kill: func() {}}, false)
	must(t, err)
	t.Cleanup(func() {
		j.Finish(runner.Result{}, nil)
		tab.Close(context.Background())
	})
	return j
}

func TestType(t *testing.T) {
	tests := []struct {
		name        string
		tty         bool
		text        string
		keys        []string
		want        string
		closed      bool
		interrupted bool
		err         string
	}{
		{name: "pipe: text as given", text: "a\nb\n", want: "a\nb\n"},
		{name: "terminal: a newline is Enter", tty: true, text: "a\nb\n", want: "a\rb\r"},
		{name: "pipe: Enter is a newline", text: "yes", keys: []string{"Enter"}, want: "yes\n"},
		{name: "terminal: keys as a terminal sends them", tty: true, keys: []string{"Up", "Enter", "Ctrl-C"}, want: "\x1b[A\r\x03"},
		{name: "pipe: Ctrl-D ends the input", text: "last\n", keys: []string{"Ctrl-D"}, want: "last\n", closed: true},
		{name: "pipe: Ctrl-C interrupts", keys: []string{"Ctrl-C"}, interrupted: true},
		{name: "an unknown key", keys: []string{"Hyper-Q"}, err: "Hyper-Q"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := &input{}
			interrupted := false
			j := typing(t, tt.tty, in, func() error { interrupted = true; return nil })
			err := j.Type(tt.text, tt.keys)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("Type: %v", err)
			case tt.err != "" && (err == nil || !bytes.Contains([]byte(err.Error()), []byte(tt.err))):
				t.Fatalf("Type = %v, want an error naming %q", err, tt.err)
			}
			if in.String() != tt.want || in.closed != tt.closed || interrupted != tt.interrupted {
				t.Errorf("sent %q, closed %v, interrupted %v; want %q, %v, %v", in.String(), in.closed, interrupted, tt.want, tt.closed, tt.interrupted)
			}
		})
	}
}

// Input after Ctrl-D is refused: the job's input is closed.
func TestTypeAfterEndOfInput(t *testing.T) {
	j := typing(t, false, &input{}, nil)
	must(t, j.Type("", []string{"Ctrl-D"}))
	if err := j.Type("more", nil); !errors.Is(err, ErrInputClosed) {
		t.Errorf("Type after Ctrl-D = %v, want ErrInputClosed", err)
	}
}
