package output

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestCaptureRealCommand pipes real commands' stdout and stderr into Captures, the way
// the runner does.
func TestCaptureRealCommand(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	var seq bytes.Buffer
	for i := 1; i <= 100_000; i++ {
		fmt.Fprintf(&seq, "%d\n", i)
	}
	tests := []struct {
		name           string
		script         string
		stdout, stderr []byte // exact expected bytes
		binary         bool
	}{
		{"echo", "echo hello", []byte("hello\n"), nil, false},
		{"both streams", "echo out; echo err >&2", []byte("out\n"), []byte("err\n"), false},
		{"long output", "i=1; while [ $i -le 100000 ]; do echo $i; i=$((i+1)); done", seq.Bytes(), nil, false},
		{"utf-8", "printf '日本語\\n'", []byte("日本語\n"), nil, false},
		{"binary", "printf 'ELF\\000\\001\\002'", []byte("ELF\x00\x01\x02"), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			stdout := New(Options{SpillDir: dir, Name: "stdout"})
			stderr := New(Options{SpillDir: dir, Name: "stderr"})
			cmd := exec.Command(sh, "-c", tt.script)
			cmd.Stdout, cmd.Stderr = stdout, stderr
			if err := cmd.Run(); err != nil {
				t.Fatal(err)
			}
			out, errOut := stdout.Close(), stderr.Close()
			if out.Binary != tt.binary {
				t.Errorf("Binary = %v, want %v", out.Binary, tt.binary)
			}
			checkProperties(t, tt.stdout, out, DefaultLimit)
			checkProperties(t, tt.stderr, errOut, DefaultLimit)
			if out.Truncated && !strings.HasPrefix(out.Text, "1\n2\n3\n") || out.Truncated && !strings.HasSuffix(out.Text, "99999\n100000\n") {
				t.Errorf("truncated Text does not start and end with whole lines: %q", abbrev(out.Text))
			}
		})
	}
}
