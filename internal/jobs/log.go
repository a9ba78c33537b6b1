package jobs

import (
	"bytes"
	"io"
	"os"
	"sync"

	"github.com/shellgate/shellgate/internal/output"
)

// Log is one output stream of a job, kept in files so that it can be read
// from any offset, again and again, while memory stays bounded whatever the
// job prints. At most max bytes are kept on disk, the newest: the stream goes
// to one file and then another of max/2 bytes each, and the older is dropped
// when a third would begin, so a server that logs for days still shows its
// latest lines. A stream's first bytes (MemMax, JobMemMax) are kept in
// memory: the first file is created only once the stream outgrows them, or
// once a read needs a path to show (a cut read names the file with the whole
// output). Most
// commands of a session print little, and a file made and removed for each
// costs more than its bytes (ext4's search for a free inode steps over every
// recently deleted one).
//
// A call's log (see Whole) is one file instead, holding the stream from its
// first byte up to max: the call's spill file once it ends (Handover), so that
// a call's output is on disk once.
type Log struct {
	dir, name string
	max       int64
	red       *output.Redactor // nil: nothing to redact
	tee       io.Writer        // also gets what is kept (a terminal's screen)

	mu      sync.Mutex
	segs    []*segment // oldest first; at most two
	total   int64      // bytes written, kept or not
	end     int64      // the offset after the last byte kept
	err     error      // why the stream could not be kept (it is counted only)
	changed chan struct{}
	removed bool
	whole   bool // one file from the first byte, up to max; then counted only
	// While inMem, the bytes kept, [0, end), are mem, and there is no file
	// yet; once a file is needed (see toFile), never again.
	inMem bool
	mem   []byte
}

// MemMax is the most bytes of a call's stream (see Whole) a Log keeps in
// memory before it writes them to its first file; JobMemMax a job's. A call
// holds them for as long as it runs; a session remembers dozens of jobs,
// ended ones too, so theirs hold less.
const (
	MemMax    = 64 << 10
	JobMemMax = 8 << 10
)

// segment is one file of a Log, holding the stream from offset start.
type segment struct {
	w, r  *os.File
	path  string
	start int64
	size  int64
	// readers are reads in flight (readAt); the last one closes r of a
	// segment dropped meanwhile, so a removed file is let go at once, not
	// at a garbage collection. Both under the Log's lock.
	readers int
	dropped bool
}

// close ends the segment, under the Log's lock: r stays open for a read in
// flight (ReadAt on a removed file still works) until it ends. It returns
// the error of closing the written file.
func (g *segment) close(remove bool) error {
	err := g.w.Close()
	if remove {
		os.Remove(g.path)
	}
	g.dropped = true
	if g.readers == 0 {
		g.r.Close()
	}
	return err
}

// NewLog returns a Log that will keep the newest max bytes (at least) of a
// stream in files in dir, with the values of secrets (name → value)
// replaced wherever they are printed.
func NewLog(dir, name string, max int64, secrets map[string]string) *Log {
	return &Log{dir: dir, name: name, max: max, red: output.NewRedactor(secrets), changed: make(chan struct{}), inMem: true}
}

// Tee sends what the log keeps, redacted, to w as well. Call it before the
// first Write.
func (l *Log) Tee(w io.Writer) { l.tee = w }

// Write appends p. It never fails, so that a command is never blocked or killed
// by its own log: bytes that cannot be written are counted only.
func (l *Log) Write(p []byte) (int, error) {
	n := len(p)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.red != nil {
		p = l.red.Feed(p)
	}
	l.append(p)
	return n, nil
}

// flush writes what the redactor held back, at the stream's end.
func (l *Log) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.red != nil {
		l.append(l.red.Flush())
	}
}

// Whole makes l a call's log: one file from the first byte, up to max bytes,
// past which bytes are counted only, as in a spill file. Call it before the
// first Write.
func (l *Log) Whole() { l.whole = true }

// Rotate makes a call's log a job's, which keeps the newest bytes: from now
// on the stream goes on in files of max/2 bytes. If the call's file had
// reached max, it is dropped, since the bytes after it are not kept in order.
func (l *Log) Rotate() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.whole {
		return
	}
	l.whole = false
	if l.inMem && int64(len(l.mem)) > l.memCap() {
		l.toFile() // more than a job keeps in memory
	}
	if l.end < l.total && l.err == nil {
		for _, g := range l.segs {
			g.close(true)
		}
		l.segs, l.end = nil, l.total
	}
}

// Handover gives a call's file up to the caller, which then owns it (the
// call's capture keeps it as its spill file): its path and the bytes in it,
// "" if the stream is empty, or why the file is incomplete (removed then). A
// job's log gives up nothing: its files are read until it is forgotten.
func (l *Log) Handover() (path string, size int64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.whole || l.removed {
		return "", 0, nil
	}
	l.toFile()
	if len(l.segs) == 0 && l.err == nil {
		return "", 0, nil
	}
	l.removed = true
	if l.err != nil {
		for _, g := range l.segs {
			g.close(true)
		}
		l.segs = nil
		return "", 0, l.err
	}
	g := l.segs[0]
	l.segs = nil
	if err := g.close(false); err != nil {
		os.Remove(g.path)
		return "", 0, err
	}
	return g.path, g.size, nil
}

func (l *Log) segMax() int64 {
	if l.whole {
		return max(l.max, 1)
	}
	return max(l.max/2, 1)
}

// memCap is the most bytes kept in memory: MemMax for a call's log,
// JobMemMax for a job's, or less, so that they fit in one file of the log.
func (l *Log) memCap() int64 {
	if l.whole {
		return min(MemMax, max(l.max/2, 1))
	}
	return min(JobMemMax, max(l.max/2, 1))
}

// toFile ends keeping the stream in memory: what it holds goes to the first
// file. If that file cannot be made, the bytes stay in memory, still read,
// and later ones are counted only (l.err).
func (l *Log) toFile() {
	if !l.inMem || l.removed || l.err != nil {
		return
	}
	if len(l.mem) == 0 {
		l.inMem, l.mem = false, nil
		return
	}
	g := l.newSegment(0)
	if g == nil {
		return
	}
	n, err := g.w.Write(l.mem)
	g.size = int64(n)
	if err != nil {
		g.close(true)
		l.err = err
		return
	}
	l.segs = append(l.segs, g)
	l.inMem, l.mem = false, nil
}

func (l *Log) append(p []byte) {
	if l.removed || len(p) == 0 {
		return
	}
	if l.tee != nil {
		l.tee.Write(p)
	}
	l.total += int64(len(p))
	if l.inMem && l.err == nil && int64(len(l.mem)+len(p)) <= l.memCap() {
		if len(l.mem)+len(p) > cap(l.mem) {
			// Grown by hand, so that it never holds more than memCap.
			grown := make([]byte, len(l.mem), min(l.memCap(), max(2*int64(cap(l.mem)), int64(len(l.mem)+len(p)), 512)))
			copy(grown, l.mem)
			l.mem = grown
		}
		l.mem = append(l.mem, p...)
		l.end += int64(len(p))
		p = nil
	} else {
		l.toFile()
	}
	for len(p) > 0 && l.err == nil {
		cur := l.current()
		if cur == nil {
			break
		}
		k := min(int64(len(p)), l.segMax()-cur.size)
		n, err := cur.w.Write(p[:k])
		cur.size += int64(n)
		l.end += int64(n)
		l.err = err
		p = p[n:]
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

// current returns the segment to write to, starting a new one (and dropping
// the oldest) when the last is full; nil after an error.
func (l *Log) current() *segment {
	if n := len(l.segs); n > 0 && l.segs[n-1].size < l.segMax() {
		return l.segs[n-1]
	} else if n > 0 && l.whole {
		return nil // full: the rest is counted only
	}
	g := l.newSegment(l.end)
	if g == nil {
		return nil
	}
	if len(l.segs) == 2 {
		l.segs[0].close(true)
		l.segs = l.segs[1:]
	} else if len(l.segs) == 1 {
		l.segs[0].w.Sync() // nothing more goes there
	}
	l.segs = append(l.segs, g)
	return g
}

// newSegment creates a file for the stream from offset start; nil (and
// l.err) if it cannot.
func (l *Log) newSegment(start int64) *segment {
	w, err := output.CreateFile(l.dir, l.name)
	if err != nil {
		l.err = err
		return nil
	}
	r, err := os.Open(w.Name())
	if err != nil {
		w.Close()
		os.Remove(w.Name())
		l.err = err
		return nil
	}
	return &segment{w: w, r: r, path: w.Name(), start: start}
}

// Total is the number of bytes written so far, kept or not.
func (l *Log) Total() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// Path is the file holding the newest part of the stream, "" while it is
// empty or kept in memory.
func (l *Log) Path() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.segs) == 0 {
		return ""
	}
	return l.segs[len(l.segs)-1].path
}

// Changed returns a channel closed at the next write.
func (l *Log) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// state returns what a reader needs at once: the kept bytes are [first, end)
// of the total written.
func (l *Log) state() (first, end, total int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	first = l.end
	if l.inMem {
		first = 0
	} else if len(l.segs) > 0 {
		first = l.segs[0].start
	}
	return first, l.end, l.total
}

// filePath is Path for a read that left bytes out, which must name a file
// holding them: the bytes kept in memory go to a file now.
func (l *Log) filePath() string {
	l.mu.Lock()
	l.toFile()
	l.mu.Unlock()
	return l.Path()
}

// A segRead is a segment as a read found it: its size then (the writer goes
// on), and the segment, held open for the read until done.
type segRead struct {
	g           *segment
	start, size int64
}

// reading holds the segments open for one read; done lets them go.
func (l *Log) reading() (segs []segRead, first, end int64, done func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, g := range l.segs {
		g.readers++
		segs = append(segs, segRead{g, g.start, g.size})
	}
	first = l.end
	if len(segs) > 0 {
		first = segs[0].start
	}
	return segs, first, l.end, func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, s := range segs {
			if s.g.readers--; s.g.readers == 0 && s.g.dropped {
				s.g.r.Close()
			}
		}
	}
}

// readAt reads up to n bytes kept at offset off.
func (l *Log) readAt(off int64, n int) []byte {
	l.mu.Lock()
	if l.inMem {
		defer l.mu.Unlock()
		if off < 0 || off >= int64(len(l.mem)) || n <= 0 {
			return nil
		}
		return append([]byte(nil), l.mem[off:min(off+int64(n), int64(len(l.mem)))]...)
	}
	l.mu.Unlock()
	segs, first, end, done := l.reading()
	defer done()
	if off < first || off >= end || n <= 0 {
		return nil
	}
	b := make([]byte, 0, min(int64(n), end-off))
	for _, g := range segs {
		if off >= g.start+g.size || len(b) == cap(b) {
			continue
		}
		chunk := make([]byte, min(int64(cap(b)-len(b)), g.start+g.size-off))
		m, _ := g.g.r.ReadAt(chunk, off-g.start)
		b = append(b, chunk[:m]...)
		off += int64(m)
		if m < len(chunk) {
			break
		}
	}
	return b
}

// Remove deletes the files; later writes are counted only.
func (l *Log) Remove() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.removed = true
	for _, g := range l.segs {
		g.close(true)
	}
	l.segs, l.mem = nil, nil
}

// Slice is a piece of a stream as read: its text, and where the next read starts.
type Slice struct {
	Text    string
	Next    int64 // offset after the bytes read
	Skipped int64 // bytes left out of Text (cut from the middle, or past the file's cap)
	Path    string
}

// readSince returns the bytes from offset from to the end, at most limit of
// them: the head and tail, with a marker for the middle, when there are more.
func (l *Log) readSince(from int64, limit int) Slice {
	first, size, total := l.state()
	s := Slice{Next: total, Path: l.Path()}
	if from >= total {
		return s
	}
	if from < first { // dropped to keep the newest
		s.Skipped += first - from
		from = first
	}
	if from >= size {
		s.Skipped += total - from
		return s
	}
	n := size - from
	s.Skipped += total - size
	if n <= int64(limit) {
		s.Text = text(l.readAt(from, int(n)))
		return s
	}
	half := limit / 2
	head := l.readAt(from, half)
	tail := l.readAt(size-int64(half), half)
	s.Skipped += n - int64(len(head)+len(tail))
	s.Path = l.filePath()
	s.Text = text(head) + cutMarker(n-int64(len(head)+len(tail)), s.Path) + text(tail)
	return s
}

// readLines returns the complete lines from offset from that match keep, at most
// limit bytes of them (the last ones), and the offset after the last complete
// line looked at: a line still being written is left for the next read.
func (l *Log) readLines(from int64, limit int, keep func([]byte) bool) Slice {
	first, size, total := l.state()
	s := Slice{Next: from, Path: l.Path()}
	if from < first { // dropped to keep the newest
		s.Skipped, from, s.Next = first-from, first, first
	}
	if from >= size {
		if size < total { // not kept (a write error): nothing more will be
			s.Next, s.Skipped = total, s.Skipped+max(0, total-from)
		}
		return s
	}
	var kept [][]byte
	keptBytes := 0
	const chunk = 64 << 10
	var partial []byte
	for off := from; off < size; {
		b := l.readAt(off, chunk)
		if len(b) == 0 {
			break
		}
		off += int64(len(b))
		b = append(partial, b...)
		partial = nil
		for {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				if len(b) > chunk { // an endless line: judge what there is
					i = len(b) - 1
				} else {
					partial = b
					break
				}
			}
			line := b[:i+1]
			s.Next += int64(len(line))
			if keep(bytes.TrimSuffix(line, []byte("\n"))) {
				kept = append(kept, line)
				keptBytes += len(line)
				for keptBytes > limit && len(kept) > 1 {
					keptBytes -= len(kept[0])
					s.Skipped += int64(len(kept[0]))
					kept = kept[1:]
				}
			}
			b = b[i+1:]
		}
	}
	var out bytes.Buffer
	for _, k := range kept {
		out.Write(k)
	}
	s.Text = text(out.Bytes())
	return s
}

// tailLines returns the last n lines kept, within limit bytes.
func (l *Log) tailLines(n, limit int) Slice {
	first, size, total := l.state()
	s := Slice{Next: total, Path: l.Path()}
	if size <= first || n <= 0 {
		return s
	}
	start := max(first, size-int64(limit))
	b := l.readAt(start, int(size-start))
	b = bytes.TrimSuffix(b, []byte("\n"))
	cut := len(b)
	for i := 0; i < n && cut > 0; i++ {
		j := bytes.LastIndexByte(b[:cut], '\n')
		cut = j
		if j < 0 {
			cut = 0
			if start > 0 { // the first line may be partial
				s.Skipped = start
			}
			break
		}
	}
	if cut > 0 {
		cut++ // past the newline
	}
	s.Text = text(b[cut:])
	if s.Text != "" {
		s.Text += "\n"
	}
	return s
}
