package output

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
)

func lines(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		fmt.Fprintf(&b, "line %06d of the build log\n", i)
	}
	return b.Bytes()
}

func TestCaptureSizes(t *testing.T) {
	lane.Live(t)
	t.Parallel()
	tests := []struct {
		name      string
		in        []byte
		limit     int
		truncated bool
	}{
		{"empty", nil, 100, false},
		{"small", []byte("hello, world\n"), 100, false},
		{"exact limit", bytes.Repeat([]byte("x"), 100), 100, false},
		{"limit plus one", bytes.Repeat([]byte("x"), 101), 100, true},
		{"no trailing newline", []byte("ok"), 0, false},
		{"exact default limit", bytes.Repeat([]byte("abcdefg\n"), DefaultLimit/8), 0, false},
		{"default limit plus one", append(bytes.Repeat([]byte("abcdefg\n"), DefaultLimit/8), 'z'), 0, true},
		{"huge lines", lines(400_000), 0, true}, // ~11 MB
		{"huge one line", bytes.Repeat([]byte("0123456789"), 1_000_000), 0, true},
		{"multibyte", []byte(strings.Repeat("日本語のテキスト、", 5000)), 0, true},
		{"tiny limit", []byte("héllo wörld"), 1, true},
	}
	chunkings := [][]int{nil, {1}, {7, 3, 4096}, {64 << 10}}
	for _, tt := range tests {
		for _, sizes := range chunkings {
			t.Run(fmt.Sprintf("%s/chunks%v", tt.name, sizes), func(t *testing.T) {
				limit := tt.limit
				if limit == 0 {
					limit = DefaultLimit
				}
				if len(sizes) == 1 && sizes[0] == 1 && len(tt.in) > 1<<20 {
					t.Skip("byte-at-a-time over megabytes is slow and adds nothing")
				}
				c := New(Options{Limit: tt.limit, SpillDir: t.TempDir(), Name: "stdout"})
				writeChunks(t, c, tt.in, sizes...)
				r := c.Close()
				if r.Truncated != tt.truncated {
					t.Errorf("Truncated = %v, want %v", r.Truncated, tt.truncated)
				}
				if r.Binary {
					t.Errorf("text output reported Binary")
				}
				if tt.truncated && (r.SpillPath == "" || r.SpillErr != nil) {
					t.Errorf("SpillPath = %q, SpillErr = %v; want a spill file", r.SpillPath, r.SpillErr)
				}
				if tt.truncated && !strings.Contains(r.Text, "full output: "+r.SpillPath+"]") {
					t.Errorf("marker does not name the spill file %s: %q", r.SpillPath, abbrev(r.Text))
				}
				if tt.truncated && limit >= 100 && len(r.Text) < limit*3/4 {
					t.Errorf("truncated Text keeps only %d bytes of a %d limit", len(r.Text), limit)
				}
				checkProperties(t, tt.in, r, limit)
			})
		}
	}
}

// TestCaptureCuts pins down exactly where head and tail are cut.
func TestCaptureCuts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		in         string
		limit      int
		head, tail string
	}{{
		// Head window is 10/4 = 2 bytes before byte 10; tail window 2 bytes.
		name: "line boundary near", in: "aaaaaaaa\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\ncccccccccc",
		limit: 20, head: "aaaaaaaa\n", tail: "cccccccccc",
	}, {
		// The newlines are too far from the cuts: cut mid-line, at rune boundaries.
		name: "line boundary far", in: "a\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\nc",
		limit: 20, head: "a\nbbbbbbbb", tail: "bbbbbbbb\nc",
	}, {
		name: "euro signs", in: strings.Repeat("€", 100), // 3 bytes each
		limit: 101, head: strings.Repeat("€", 16), tail: strings.Repeat("€", 17),
	}, {
		name: "emoji", in: strings.Repeat("😀", 100), // 4 bytes each; 51-byte tail ring
		limit: 101, head: strings.Repeat("😀", 12), tail: strings.Repeat("😀", 12),
	}, {
		name: "two-byte runes", in: strings.Repeat("é", 100),
		limit: 21, head: strings.Repeat("é", 5), tail: strings.Repeat("é", 5),
	}, {
		// The byte before the tail ring is a newline: the tail starts a line already.
		name: "tail starts a line", in: strings.Repeat("x", 50) + "\n" + "0123456789",
		limit: 20, head: "xxxxxxxxxx", tail: "0123456789",
	}, {
		name: "cjk lines", in: strings.Repeat("第一行\n", 30),
		limit: 60, head: "第一行\n第一行\n第一行\n", tail: "第一行\n第一行\n第一行\n",
	}}
	for _, tt := range tests {
		for _, chunk := range []int{1, 2, 3, 5, 1 << 20} {
			t.Run(fmt.Sprintf("%s/chunk%d", tt.name, chunk), func(t *testing.T) {
				c := New(Options{Limit: tt.limit, SpillDir: t.TempDir()})
				writeChunks(t, c, []byte(tt.in), chunk)
				r := c.Close()
				head, _, tail, ok := splitText(r.Text, []byte(tt.in))
				if !ok {
					t.Fatalf("no marker in %q", r.Text)
				}
				if head != tt.head || tail != tt.tail {
					t.Errorf("head, tail = %q, %q\nwant          %q, %q", head, tail, tt.head, tt.tail)
				}
				checkProperties(t, []byte(tt.in), r, tt.limit)
			})
		}
	}
}

func TestCaptureMarker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := New(Options{Limit: 20, SpillDir: dir, Name: "stdout"})
	c.Write([]byte("0123456789abcdefghijklmnopqrstuvwxyz\n"))
	r := c.Close()
	want := "0123456789\n... [17 bytes omitted; full output: " + r.SpillPath + "] ...\nrstuvwxyz\n"
	if r.Text != want {
		t.Errorf("Text = %q\nwant   %q", r.Text, want)
	}
	if filepath.Dir(r.SpillPath) != dir || !strings.HasSuffix(r.SpillPath, ".stdout.log") {
		t.Errorf("SpillPath = %q, want <%s>/<id>.stdout.log", r.SpillPath, dir)
	}
}

func TestCaptureBinary(t *testing.T) {
	lane.Live(t)
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 3<<20)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	text := bytes.Repeat([]byte("plain text\n"), 10_000) // 110 KB
	tests := []struct {
		name   string
		in     []byte
		binary bool
	}{
		// A NUL or two in text is shown (as ␀); NULs beside bytes no text
		// holds, or dense, within the first 8 KiB are binary.
		{"a stray NUL in text", []byte("\x00abc"), false},
		{"find -print0", []byte("./a.txt\x00./src/main.go\x00./docs/read me.md\x00"), false},
		{"NUL then control within 8 KiB", append(append(bytes.Repeat([]byte("a"), 8190), 0), 1), true},
		{"control then NUL within 8 KiB", append(append([]byte{2}, bytes.Repeat([]byte("a"), 8189)...), 0), true},
		{"ELF header", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00"), true},
		{"PNG header", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00"), true},
		{"UTF-16", []byte("h\x00e\x00l\x00l\x00o\x00 \x00w\x00o\x00r\x00l\x00d\x00\n\x00"), true},
		{"NUL and control after 8 KiB is text", append(bytes.Repeat([]byte("a"), 8192), 0, 1), false},
		// A stray byte that is not UTF-8 is shown as U+FFFD; mostly undecodable is binary.
		{"invalid UTF-8 small", []byte("caf\xe9 au lait\n"), false},
		{"lone continuation byte", []byte("ok\x80ok"), false},
		{"overlong encoding", []byte("\xc0\xafetc"), true},
		{"surrogate half", []byte("\xed\xa0\x80"), true},
		{"random bytes", random, true},
		{"high bytes without NUL", bytes.Repeat([]byte("\x80\xff\xfeab"), 2000), true},
		{"invalid in head of large", append([]byte("\xff"), text...), false},
		{"invalid in final tail", append(bytes.Clone(text), "\xfe\n"...), false},
		// A stray byte in the omitted middle is neither kept nor shown.
		{"invalid only in the middle", append(append(bytes.Clone(text), '\xff'), text...), false},
		{"valid UTF-8 text", []byte("naïve café – 日本語 😀\n"), false},
		// The end of the stream mid-rune (head -c, a kill) is shown as U+FFFD.
		{"incomplete final rune", []byte("abc\xe6\x97"), false},
		{"incomplete final rune of large", append(bytes.Clone(text), "\xf0\x9f\x98"...), false},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1, 2, 4096, 1 << 30} {
			t.Run(fmt.Sprintf("%s/chunk%d", tt.name, chunk), func(t *testing.T) {
				if chunk < 4096 && len(tt.in) > 1<<20 {
					t.Skip("slow and adds nothing")
				}
				c := New(Options{SpillDir: t.TempDir(), Name: "stdout"})
				writeChunks(t, c, tt.in, chunk)
				r := c.Close()
				if r.Binary != tt.binary {
					t.Fatalf("Binary = %v, want %v", r.Binary, tt.binary)
				}
				if tt.binary && r.SpillPath == "" {
					t.Errorf("binary output not spilled (SpillErr %v)", r.SpillErr)
				}
				checkProperties(t, tt.in, r, DefaultLimit)
			})
		}
	}
}

// TestCaptureBinaryLive checks Binary reports NUL bytes as they are written, before Close.
func TestCaptureBinaryLive(t *testing.T) {
	t.Parallel()
	c := New(Options{SpillDir: t.TempDir()})
	c.Write([]byte("text so far\n"))
	if c.Binary() {
		t.Fatal("Binary before any binary byte")
	}
	c.Write([]byte("\x7fELF\x02\x01\x01\x00"))
	if !c.Binary() {
		t.Fatal("Binary() = false right after a NUL byte")
	}
	c.Write([]byte("more text\n"))
	if r := c.Close(); !r.Binary || r.Text != "" || r.Truncated || r.SpillPath == "" {
		t.Errorf("Result = %+v; want Binary, no Text, not Truncated, spilled", r)
	}
}

// TestCaptureSplitRunes writes every valid UTF-8 text split at every byte: never binary.
func TestCaptureSplitRunes(t *testing.T) {
	lane.Live(t)
	t.Parallel()
	in := []byte("aé€😀 日本\n")
	for cut := range len(in) + 1 {
		for cut2 := cut; cut2 <= len(in); cut2++ {
			c := New(Options{SpillDir: t.TempDir()})
			c.Write(in[:cut])
			c.Write(in[cut:cut2])
			c.Write(in[cut2:])
			r := c.Close()
			if r.Binary || r.Text != string(in) || r.SpillPath != "" {
				t.Errorf("split at %d,%d: Binary %v, Text %q, SpillPath %q", cut, cut2, r.Binary, r.Text, r.SpillPath)
			}
		}
	}
}

func TestCaptureSpillCap(t *testing.T) {
	t.Parallel()
	in := lines(100_000) // 2.8 MB
	tests := []struct {
		name     string
		spillMax int64
		capped   bool
	}{
		{"under the cap", int64(len(in)), false},
		{"one byte over the cap", int64(len(in)) - 1, true},
		{"far over the cap", 1 << 20, true},
		{"cap below the limit", 1000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := New(Options{SpillDir: t.TempDir(), SpillMax: tt.spillMax})
			writeChunks(t, c, in, 65536, 1000)
			r := c.Close()
			if r.SpillCapped != tt.capped || r.SpillErr != nil {
				t.Fatalf("SpillCapped = %v, SpillErr = %v; want %v, nil", r.SpillCapped, r.SpillErr, tt.capped)
			}
			info, err := os.Stat(r.SpillPath)
			if err != nil {
				t.Fatal(err)
			}
			if want := min(tt.spillMax, int64(len(in))); info.Size() != want {
				t.Errorf("spill file has %d bytes, want %d", info.Size(), want)
			}
			if tt.capped && !strings.Contains(r.Text, fmt.Sprintf("(first %d bytes only): %s]", tt.spillMax, r.SpillPath)) {
				t.Errorf("marker does not say the spill file is capped: %q", abbrev(r.Text))
			}
			checkProperties(t, in, r, DefaultLimit)
		})
	}
}

func TestCaptureUnwritableSpillDir(t *testing.T) {
	t.Parallel()
	// A directory under a regular file cannot be created, even by root.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, in := range [][]byte{lines(10_000), []byte("small\x00\x01binary")} {
		c := New(Options{SpillDir: filepath.Join(file, "spill")})
		writeChunks(t, c, in, 4096)
		r := c.Close()
		if r.SpillPath != "" || r.SpillErr == nil {
			t.Fatalf("SpillPath = %q, SpillErr = %v; want none and an error", r.SpillPath, r.SpillErr)
		}
		if r.Binary {
			continue
		}
		if !r.Truncated || !strings.Contains(r.Text, "full output not saved: cannot create spill file") {
			t.Errorf("Truncated %v, marker does not give the reason: %q", r.Truncated, abbrev(r.Text))
		}
		checkProperties(t, in, r, DefaultLimit)
	}
}

func TestCaptureSpillFileMode(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "new", "spill")
	c := New(Options{SpillDir: dir, Name: "../../etc/passwd"})
	c.Write([]byte("\x00\x01")) // binary: always spilled
	r := c.Close()
	if r.SpillErr != nil {
		t.Fatal(r.SpillErr)
	}
	if filepath.Dir(r.SpillPath) != dir || !isSpillName(filepath.Base(r.SpillPath), false) {
		t.Errorf("SpillPath %q is not a spill file in %s", r.SpillPath, dir)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, r.SpillPath: 0o600} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode().Perm() != want && !(want == 0o700 && isWindows) {
			t.Errorf("%s has mode %v, want %v", path, info.Mode().Perm(), want)
		}
	}
	c2 := New(Options{SpillDir: dir, Name: "../../etc/passwd"})
	c2.Write([]byte("\x00\x01")) // binary: always spilled
	if r2 := c2.Close(); r2.SpillPath == r.SpillPath {
		t.Errorf("two captures share the spill file name %s", r.SpillPath)
	}
}

func TestCaptureCloseIdempotent(t *testing.T) {
	t.Parallel()
	c := New(Options{Limit: 10, SpillDir: t.TempDir()})
	c.Write([]byte("0123456789abcdef"))
	r1 := c.Close()
	if n, err := c.Write([]byte("late")); n != 4 || err != nil {
		t.Errorf("Write after Close = %d, %v", n, err)
	}
	r2 := c.Close()
	if !reflect.DeepEqual(r1, r2) {
		t.Errorf("second Close = %+v, want %+v", r2, r1)
	}
	if c.Total() != 16 {
		t.Errorf("Total after a late write = %d, want 16", c.Total())
	}
}

// TestCaptureConcurrent reads Total and Binary while another goroutine writes; run
// with -race.
func TestCaptureConcurrent(t *testing.T) {
	t.Parallel()
	c := New(Options{Limit: 1000, SpillDir: t.TempDir()})
	chunk := bytes.Repeat([]byte("concurrent\n"), 100)
	const writes = 2000
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			var last int64
			for {
				select {
				case <-done:
					return
				default:
				}
				n := c.Total()
				if n < last || n%int64(len(chunk)) != 0 {
					t.Errorf("Total went %d → %d", last, n)
					return
				}
				last = n
				if c.Binary() {
					t.Error("text reported binary")
					return
				}
			}
		})
	}
	for range writes {
		c.Write(chunk)
	}
	r := c.Close()
	close(done)
	wg.Wait()
	if r.Total != writes*int64(len(chunk)) || c.Total() != r.Total {
		t.Errorf("Total = %d / %d, want %d", r.Total, c.Total(), writes*len(chunk))
	}
}

// TestCaptureNoAllocs: once spilling, Write allocates nothing.
func TestCaptureNoAllocs(t *testing.T) {
	c := New(Options{SpillDir: t.TempDir()})
	defer c.Close()
	chunk := bytes.Repeat([]byte("steady state\n"), 5000)
	c.Write(chunk)
	c.Write(chunk)
	if n := testing.AllocsPerRun(100, func() { c.Write(chunk) }); n != 0 {
		t.Errorf("Write allocates %v times per call in the steady state", n)
	}
}

func TestCaptureRelativeSpillDir(t *testing.T) {
	t.Chdir(t.TempDir())
	c := New(Options{SpillDir: "spill"})
	c.Write([]byte("\x00\x01")) // binary: always spilled
	r := c.Close()
	if r.SpillErr != nil || !filepath.IsAbs(r.SpillPath) {
		t.Errorf("SpillPath = %q, SpillErr = %v; want an absolute path", r.SpillPath, r.SpillErr)
	}
}

// fileStore is a Store holding its bytes in one file, as a call's job log.
type fileStore struct{ path string }

func (s fileStore) Handover() (string, int64, error) {
	info, err := os.Stat(s.path)
	if err != nil {
		return "", 0, err
	}
	return s.path, info.Size(), nil
}

// A capture whose stream is kept whole elsewhere writes no file: the
// store's is its spill file, counted in the quota.
func TestCaptureStore(t *testing.T) {
	dir := t.TempDir()
	out := strings.Repeat("line\n", 100)
	stored := filepath.Join(dir, "stored.log")
	if err := os.WriteFile(stored, []byte(out[:300]), 0o600); err != nil { // a store capped at 300
		t.Fatal(err)
	}
	c := New(Options{Limit: 100, SpillDir: dir, Store: fileStore{stored}, Quota: NewQuota(1 << 20)})
	c.Write([]byte(out))
	r := c.Close()
	if r.SpillPath != stored || !r.SpillCapped || r.SpillSize != 300 || r.SpillErr != nil {
		t.Fatalf("spill %q capped %v size %d err %v, want the store's file of 300 bytes", r.SpillPath, r.SpillCapped, r.SpillSize, r.SpillErr)
	}
	if files, _ := os.ReadDir(dir); len(files) != 1 {
		t.Errorf("%d files in the spill directory, want the store's only", len(files))
	}
}

// The digest of a capture whose store holds the stream (an MCP session's call)
// numbers the omitted middle's error lines in the store's file, as one that
// spills on its own does.
func TestCaptureStoreDigest(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		if i == 1500 {
			b.WriteString("main.go:12:3: error: undefined: foo\n")
			continue
		}
		fmt.Fprintf(&b, "ok line %d\n", i)
	}
	stored := filepath.Join(dir, "job-stdout.log")
	if err := os.WriteFile(stored, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	c := New(Options{Limit: 2000, SpillDir: dir, Store: fileStore{stored}, Quota: NewQuota(1 << 20)})
	c.Write([]byte(b.String()))
	r := c.Close()
	if r.SpillPath != stored || !r.Truncated || len(r.Digest) != 1 || r.Digest[0] != (Line{1500, "main.go:12:3: error: undefined: foo"}) {
		t.Errorf("spill %q truncated %v digest %+v, want line 1500 of the store's file", r.SpillPath, r.Truncated, r.Digest)
	}
}
