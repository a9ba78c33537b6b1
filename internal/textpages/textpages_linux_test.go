package textpages

import (
	"bufio"
	"crypto/sha256"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// exeRSS sums the resident kB of this executable's mappings, read-only ones
// and all.
func exeRSS(t *testing.T) (readOnly, all int) {
	t.Helper()
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var ours, ro bool
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") {
			ours = len(fields) >= 6 && fields[5] == exe
			ro = ours && len(fields[1]) == 4 && fields[1][1] == '-'
			continue
		}
		if ours && fields[0] == "Rss:" && len(fields) >= 2 {
			kb, _ := strconv.Atoi(fields[1])
			all += kb
			if ro {
				readOnly += kb
			}
		}
	}
	return readOnly, all
}

// Drop gives up the executable's read-only pages, and the program runs on
// with the same code and data: what it reads afterwards (a table of the
// unicode package, this test's own code) is what it read before.
func TestDropUnmapsAndKeepsWorking(t *testing.T) {
	sum := func() [32]byte {
		h := sha256.New()
		for _, r := range unicode.Han.R16 {
			h.Write([]byte{byte(r.Lo), byte(r.Lo >> 8), byte(r.Hi), byte(r.Hi >> 8)})
		}
		return [32]byte(h.Sum(nil))
	}
	before := sum()
	ro0, _ := exeRSS(t)
	if err := Drop(); err != nil {
		t.Fatal(err)
	}
	ro1, _ := exeRSS(t)
	if after := sum(); after != before {
		t.Fatal("read-only data changed across Drop")
	}
	t.Logf("read-only pages of the executable resident: %d kB before, %d kB after", ro0, ro1)
	if ro1 >= ro0 {
		t.Errorf("Drop left %d kB of the executable's read-only pages mapped, %d kB before", ro1, ro0)
	}
	// Again, from another goroutine while this one runs: nothing to lose.
	done := make(chan error)
	go func() { done <- Drop() }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if after := sum(); after != before {
		t.Fatal("read-only data changed across a second Drop")
	}
}

// A page of the executable that holds a private copy (here the writable
// data, which the program writes) keeps its contents: Drop leaves such
// mappings alone.
var written = [4096]byte{1: 1}

func TestDropKeepsWrittenData(t *testing.T) {
	for i := range written {
		written[i] = byte(i * 7)
	}
	if err := Drop(); err != nil {
		t.Fatal(err)
	}
	for i := range written {
		if written[i] != byte(i*7) {
			t.Fatalf("written data lost at %d: %d", i, written[i])
		}
	}
}

// Of a process's mappings, only the executable's read-only, private ones
// without a private copy of any page are dropped: not the RELRO page (written
// by the dynamic linker, then made read-only), not writable data, not a
// library, not the same path's mappings in a process of another executable.
func TestDropChoosesMappings(t *testing.T) {
	const smaps = `00400000-00402000 r--p 00000000 fe:00 9979890                            /opt/sg/shellgate
Rss:                   8 kB
Anonymous:             0 kB
VmFlags: rd mr mw me sd
00402000-00b58000 r-xp 00002000 fe:00 9979890                            /opt/sg/shellgate
Rss:                7512 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me sd
00b58000-01317000 r--p 00758000 fe:00 9979890                            /opt/sg/shellgate
Anonymous:             0 kB
01317000-01318000 r--p 00f16000 fe:00 9979890                            /opt/sg/shellgate
Anonymous:             4 kB
01318000-0139a000 rw-p 00f17000 fe:00 9979890                            /opt/sg/shellgate
Anonymous:            92 kB
0139a000-03602000 rw-p 00000000 00:00 0 
Anonymous:           132 kB
7f2e1bf2d000-7f2e1c083000 r-xp 00028000 fe:00 1234                       /usr/lib/x86_64-linux-gnu/libc.so.6
Anonymous:             0 kB
7f2e1c0fa000-7f2e1c0fc000 r-xp 00000000 00:00 0                          [vdso]
7f2e1c0fc000-7f2e1c0fd000 r--s 00000000 fe:00 9979890                    /opt/sg/shellgate
Anonymous:             0 kB
7f2e1c0fd000-7f2e1c0fe000 r--p 00000000 fe:00 9979891                    /opt/sg/shellgate.old
Anonymous:             0 kB
`
	var got []string
	p := parser{exe: []byte("/opt/sg/shellgate"), drop: func(lo, hi uint64) {
		got = append(got, strconv.FormatUint(lo, 16)+"-"+strconv.FormatUint(hi, 16))
	}}
	for line := range strings.Lines(smaps) {
		p.line([]byte(strings.TrimSuffix(line, "\n")))
	}
	p.flush()
	want := []string{"400000-402000", "402000-b58000", "b58000-1317000"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("dropped %v, want %v", got, want)
	}
}

// BenchmarkDrop: one Drop, and the faults that map back what the loop
// touches.
//
//	go test -run '^$' -bench Drop ./internal/textpages
func BenchmarkDrop(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := Drop(); err != nil {
			b.Fatal(err)
		}
	}
}
