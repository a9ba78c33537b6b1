// Package textpages lets an idle process give up its mappings of its own
// executable's read-only pages (code and read-only data).
//
// Where the page cache holds an executable in large folios (ext4 on Linux
// 6.18 here: the text in 13 folios), a fault maps the whole folio it lands
// in, so every process of a large binary soon maps nearly all of its text
// and read-only data, whatever it runs: for shellgate 15 of its 22 MB, in the
// MCP server and again in each session's helper, counted in each one's RSS
// and PSS (BenchmarkMCPIdleRSS). Drop zaps those mappings; the pages stay in
// the page cache, and a later touch maps back only the folios it reaches
// (minor faults). Until then they are not charged to the process, and the
// kernel may reclaim them as it reclaims any file cache no one maps. Nothing
// of the process's own memory is freed: the heap is runtime/debug's business.
package textpages

import (
	"bytes"
	"os"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// Drop unmaps the pages of the executable's read-only mappings from this
// process's page tables. It is safe at any time, from any goroutine: a
// mapping that may be written, or that holds a private copy of a page
// (Anonymous above 0, as the relocated, write-protected RELRO page does, or
// a debugger's breakpoint), is left as it is; the rest reads back the same
// bytes from the file at the next touch. It reads /proc/self/smaps through
// one buffer of its own and allocates next to nothing, so that a process
// that never collects garbage (a helper) can call it too.
func Drop() error {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return err
	}
	fd, err := unix.Open("/proc/self/smaps", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	mu.Lock()
	defer mu.Unlock()
	p := parser{exe: []byte(exe), drop: madviseDontNeed}
	n := 0 // bytes of buf not yet parsed: the start of an unfinished line
	for {
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if m == 0 {
			break
		}
		n += m
		rest := buf[:n]
		for {
			i := bytes.IndexByte(rest, '\n')
			if i < 0 {
				break
			}
			p.line(rest[:i])
			rest = rest[i+1:]
		}
		if len(rest) == len(buf) { // a line longer than the buffer: not smaps as we know it
			return nil
		}
		n = copy(buf[:], rest)
	}
	p.flush()
	return nil
}

// mu guards buf, the one buffer Drop reads smaps into: static, so that
// calling Drop neither allocates nor grows a goroutine's stack.
var (
	mu  sync.Mutex
	buf [8192]byte
)

// A parser follows smaps line by line: a mapping's header, then its fields.
type parser struct {
	exe       []byte
	drop      func(lo, hi uint64)
	lo, hi    uint64
	candidate bool // the current mapping is the executable's, read-only, private
}

func (p *parser) line(l []byte) {
	f1, rest := field(l)
	if len(f1) == 0 {
		return
	}
	if f1[len(f1)-1] == ':' { // a field of the current mapping
		if p.candidate && string(f1) == "Anonymous:" {
			if v, _ := field(rest); string(v) != "0" {
				p.candidate = false // it holds private copies: zapping would lose them
			}
		}
		return
	}
	// A header: "lo-hi perms offset dev inode path".
	p.flush()
	dash := bytes.IndexByte(f1, '-')
	perms, rest := field(rest)
	_, rest = field(rest) // offset
	_, rest = field(rest) // device
	_, rest = field(rest) // inode
	path := bytes.TrimSpace(rest)
	if dash < 0 || len(perms) != 4 || perms[1] != '-' || perms[3] != 'p' || !bytes.Equal(path, p.exe) {
		return
	}
	lo, err1 := strconv.ParseUint(string(f1[:dash]), 16, 64)
	hi, err2 := strconv.ParseUint(string(f1[dash+1:]), 16, 64)
	p.lo, p.hi, p.candidate = lo, hi, err1 == nil && err2 == nil && hi > lo
}

// flush zaps the mapping just read, if it qualified.
func (p *parser) flush() {
	if p.candidate {
		p.drop(p.lo, p.hi)
	}
	p.candidate = false
}

func madviseDontNeed(lo, hi uint64) {
	unix.Syscall(unix.SYS_MADVISE, uintptr(lo), uintptr(hi-lo), unix.MADV_DONTNEED)
}

// field splits off l's first space-separated field.
func field(l []byte) (f, rest []byte) {
	l = bytes.TrimLeft(l, " \t")
	i := bytes.IndexAny(l, " \t")
	if i < 0 {
		return l, nil
	}
	return l[:i], l[i:]
}
