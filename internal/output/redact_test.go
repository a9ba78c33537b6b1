package output

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// redactAll is the reference: leftmost occurrence first, the longer value where two
// start at one place, on the whole input at once.
func redactAll(in string, secrets map[string]string) string {
	secrets = maps.Clone(secrets)
	maps.DeleteFunc(secrets, func(_, v string) bool { return len(v) < minSecret })
	var b strings.Builder
	for i := 0; i < len(in); {
		name, value := "", ""
		for n, v := range secrets {
			if v != "" && strings.HasPrefix(in[i:], v) && (len(v) > len(value) || len(v) == len(value) && n < name) {
				name, value = n, v
			}
		}
		if value == "" {
			b.WriteByte(in[i])
			i++
			continue
		}
		b.WriteString("[REDACTED:" + name + "]")
		i += len(value)
	}
	return b.String()
}

// feedAll runs in through a redactor in chunks of the given size.
func feedAll(in string, secrets map[string]string, chunk int) string {
	r := newRedactor(secrets)
	var out []byte
	for rest := []byte(in); len(rest) > 0; {
		n := min(chunk, len(rest))
		out = append(out, r.feed(rest[:n])...)
		rest = rest[n:]
	}
	return string(append(out, r.flush()...))
}

func TestRedactor(t *testing.T) {
	token := "ghp_0123456789abcdefABCDEF0123456789ab"
	tests := []struct {
		name    string
		secrets map[string]string
		in      string
		want    string
	}{
		{"one value", map[string]string{"GITHUB_TOKEN": token}, "token=" + token + "\n", "token=[REDACTED:GITHUB_TOKEN]\n"},
		{"twice, back to back", map[string]string{"T": "s3cr3t-value"}, "s3cr3t-values3cr3t-value", "[REDACTED:T][REDACTED:T]"},
		{"a prefix of the value at the end stays", map[string]string{"T": "s3cr3t-value"}, "x s3cr3t-valu", "x s3cr3t-valu"},
		{"a prefix then the value", map[string]string{"T": "aaaaaaab"}, "aaaaaaaaaaaab!", "aaaaa[REDACTED:T]!"},
		{"the longer of two values at one place", map[string]string{"SHORT": "password", "LONG": "password123"}, "password123 password", "[REDACTED:LONG] [REDACTED:SHORT]"},
		{"overlapping values", map[string]string{"A": "abcdefgh", "B": "efghijkl"}, "abcdefghijkl", "[REDACTED:A]ijkl"},
		{"nothing to redact", map[string]string{"T": "s3cr3t-value"}, "ordinary output\n", "ordinary output\n"},
		{"utf-8 around", map[string]string{"T": "s3cr3t-value"}, "日本s3cr3t-value😀", "日本[REDACTED:T]😀"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ref := redactAll(tt.in, tt.secrets); ref != tt.want {
				t.Fatalf("reference gives %q, want %q", ref, tt.want)
			}
			// Every chunk size, so the values are split at every place.
			for chunk := 1; chunk <= len(tt.in); chunk++ {
				if got := feedAll(tt.in, tt.secrets, chunk); got != tt.want {
					t.Errorf("chunks of %d: %q, want %q", chunk, got, tt.want)
				}
			}
		})
	}
	if newRedactor(map[string]string{"EMPTY": "", "SHORT": "1234567"}) != nil || newRedactor(nil) != nil {
		t.Error("a redactor with nothing to redact")
	}
}

// TestCaptureRedacts: a stripped secret printed anyway (read from a file, say) is
// redacted in the text and in the spill file, however the writes split it; Total
// counts what the reader gets.
func TestCaptureRedacts(t *testing.T) {
	secret := "sk-abcdefghijklmnopqrstuvwxyz012345"
	line := "config: api_key=" + secret + "\n"
	in := strings.Repeat(line, 400) // past the limit: spilled
	want := strings.Repeat("config: api_key=[REDACTED:OPENAI_API_KEY]\n", 400)
	for _, chunk := range []int{1, 5, len(line) - 1, 4096} {
		c := New(Options{Limit: 2048, SpillDir: t.TempDir(), Redact: map[string]string{"OPENAI_API_KEY": secret}})
		writeChunks(t, c, []byte(in), chunk)
		if total := c.Total(); total != int64(len(want)) {
			t.Errorf("chunk %d: live Total %d, want %d", chunk, total, len(want))
		}
		r := c.Close()
		if strings.Contains(r.Text, "sk-abc") || !strings.Contains(r.Text, "api_key=[REDACTED:OPENAI_API_KEY]\n") || !r.Truncated {
			t.Errorf("chunk %d: Text %q", chunk, abbrev(r.Text))
		}
		if r.Total != int64(len(want)) {
			t.Errorf("chunk %d: Total %d, want %d", chunk, r.Total, len(want))
		}
		spill, err := os.ReadFile(r.SpillPath)
		if err != nil || string(spill) != want {
			t.Errorf("chunk %d: spill file (%v) holds %q", chunk, err, abbrev(string(spill)))
		}
	}
	// Short output: all in Text, nothing on disk.
	c := New(Options{SpillDir: t.TempDir(), Redact: map[string]string{"DB_PASS": "hunter2hunter2"}})
	writeChunks(t, c, []byte("pw=hunter2hunter2\n"), 3)
	if r := c.Close(); r.Text != "pw=[REDACTED:DB_PASS]\n" || r.SpillPath != "" {
		t.Errorf("Text %q, spill %q", r.Text, r.SpillPath)
	}
}

func FuzzRedactor(f *testing.F) {
	f.Add([]byte("xx secretvalue yy secretvalue"), []byte("secretvalue"), []byte("value yy"), uint64(1))
	f.Add([]byte("aaaaaaaaaaaaab"), []byte("aaaaaaab"), []byte("aaaaaaaab"), uint64(2))
	f.Add([]byte("xxabcdefghijklxx"), []byte("abcdefgh"), []byte("efghijkl"), uint64(3))
	f.Fuzz(func(t *testing.T, in, a, b []byte, seed uint64) {
		secrets := map[string]string{"A": string(a), "B": string(b)}
		want := redactAll(string(in), secrets)
		r := newRedactor(secrets)
		if r == nil {
			return
		}
		rng := rand.New(rand.NewPCG(seed, seed>>32))
		var out []byte
		for rest := in; len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			out = append(out, r.feed(rest[:n])...)
			rest = rest[n:]
		}
		out = append(out, r.flush()...)
		if !bytes.Equal(out, []byte(want)) {
			t.Fatalf("redacted %q with %q: %q, want %q", in, secrets, out, want)
		}
	})
}

// A call's two captures, and call after call, redact the same secrets: they
// share what they look for instead of building it each time, and nothing at
// all is built when there is nothing to redact. A different set of secrets,
// or the caller's map changed, is still looked for as it now is.
func TestRedactorSharesSecrets(t *testing.T) {
	short := map[string]string{"SHORT": "1234567"}
	if n := testing.AllocsPerRun(20, func() { newRedactor(short) }); n != 0 {
		t.Errorf("nothing to redact: %v allocations", n)
	}
	secrets := map[string]string{"TOKEN": "ghp_0123456789abcdef"}
	a, b := newRedactor(secrets), newRedactor(maps.Clone(secrets))
	if a.secretSet != b.secretSet {
		t.Error("the same secrets built twice")
	}
	if n := testing.AllocsPerRun(20, func() { newRedactor(secrets) }); n > 1 {
		t.Errorf("a redactor for secrets already seen: %v allocations, want 1", n)
	}
	secrets["TOKEN"] = "glpat-abcdefghijklmnop"
	c := newRedactor(secrets)
	if got := string(c.feed([]byte("x glpat-abcdefghijklmnop ghp_0123456789abcdef y"))) + string(c.flush()); got != "x [REDACTED:TOKEN] ghp_0123456789abcdef y" {
		t.Errorf("after the secret changed: %q", got)
	}
	if got := string(a.feed([]byte("x ghp_0123456789abcdef y"))) + string(a.flush()); got != "x [REDACTED:TOKEN] y" {
		t.Errorf("a redactor made before: %q", got)
	}
}
