package jobs

import (
	"bytes"
	"io"
	"os"
	"sync"

	"github.com/shellgate/shellgate/internal/output"
)

// Log is one output stream of a job, kept whole in a file (up to a cap) so that
// it can be read from any offset, again and again, while memory stays bounded
// whatever the job prints. The file is created at the first byte: most
// commands of a session print little or nothing on one of their streams.
type Log struct {
	dir, name string
	max       int64
	red       *output.Redactor // nil: nothing to redact
	tee       io.Writer        // also gets what is kept (a terminal's screen)

	mu      sync.Mutex
	f       *os.File // nil until the first byte, or after Remove
	r       *os.File // the same file, for reading
	path    string
	size    int64 // bytes in the file
	total   int64 // bytes written, kept or not
	err     error // why the file could not be written
	changed chan struct{}
	removed bool
}

// NewLog returns a Log that will keep up to max bytes in a file in dir, with
// the values of secrets (name → value) replaced wherever they are printed.
func NewLog(dir, name string, max int64, secrets map[string]string) *Log {
	return &Log{dir: dir, name: name, max: max, red: output.NewRedactor(secrets), changed: make(chan struct{})}
}

// Tee sends what the log keeps, redacted, to w as well. Call it before the
// first Write.
func (l *Log) Tee(w io.Writer) { l.tee = w }

// Write appends p. It never fails, so that a command is never blocked or killed
// by its own log: bytes past the cap, or after a write error, are counted only.
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

func (l *Log) append(p []byte) {
	if l.removed || len(p) == 0 {
		return
	}
	if l.tee != nil {
		l.tee.Write(p)
	}
	if l.f == nil && l.err == nil {
		l.f, l.err = output.CreateFile(l.dir, l.name)
		if l.f != nil {
			l.path = l.f.Name()
			if l.r, l.err = os.Open(l.path); l.err != nil {
				l.f.Close()
				l.f = nil
			}
		}
	}
	if keep := min(int64(len(p)), l.max-l.size); keep > 0 && l.err == nil {
		n, err := l.f.Write(p[:keep])
		l.size += int64(n)
		l.err = err
	}
	l.total += int64(len(p))
	close(l.changed)
	l.changed = make(chan struct{})
}

// Total is the number of bytes written so far, kept or not.
func (l *Log) Total() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// Path is the file holding the stream, "" while it is empty.
func (l *Log) Path() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.path
}

// Changed returns a channel closed at the next write.
func (l *Log) Changed() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// state returns what a reader needs at once.
func (l *Log) state() (r *os.File, size, total int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r, l.size, l.total
}

// readAt reads up to n bytes kept at offset off.
func (l *Log) readAt(off int64, n int) []byte {
	f, size, _ := l.state()
	if f == nil || off >= size || n <= 0 {
		return nil
	}
	n = int(min(int64(n), size-off))
	b := make([]byte, n)
	m, _ := f.ReadAt(b, off)
	return b[:m]
}

// Remove deletes the file; later writes are counted only.
func (l *Log) Remove() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.removed = true
	if l.f != nil {
		l.f.Close()
		os.Remove(l.path)
		l.f = nil
		// l.r stays open for a read in flight (ReadAt on a closed file only
		// fails); the removed file's space is freed when it is collected.
	}
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
	f, size, total := l.state()
	s := Slice{Next: total, Path: l.Path()}
	if from >= total {
		return s
	}
	if f == nil || from >= size {
		s.Skipped = total - from
		return s
	}
	n := size - from
	s.Skipped = total - size
	if n <= int64(limit) {
		s.Text = text(l.readAt(from, int(n)))
		return s
	}
	half := limit / 2
	head := l.readAt(from, half)
	tail := l.readAt(size-int64(half), half)
	s.Skipped += n - int64(len(head)+len(tail))
	s.Text = text(head) + cutMarker(n-int64(len(head)+len(tail)), s.Path) + text(tail)
	return s
}

// readLines returns the complete lines from offset from that match keep, at most
// limit bytes of them (the last ones), and the offset after the last complete
// line looked at: a line still being written is left for the next read.
func (l *Log) readLines(from int64, limit int, keep func([]byte) bool) Slice {
	f, size, total := l.state()
	s := Slice{Next: from, Path: l.Path()}
	if f == nil || from >= size {
		if size == l.max { // capped: nothing more will be kept
			s.Next, s.Skipped = total, max(0, total-from)
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
	f, size, total := l.state()
	s := Slice{Next: total, Path: l.Path()}
	if f == nil || n <= 0 {
		return s
	}
	start := max(0, size-int64(limit))
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
