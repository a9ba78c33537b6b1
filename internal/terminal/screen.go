// Package terminal renders what a program writes to a pseudo-terminal into the
// plain text a person would read on the screen, and turns key names into the
// bytes a terminal sends for them.
//
// A Screen is a terminal emulator (github.com/charmbracelet/x/vt) fed with the
// bytes read from a pty master: cursor moves, clearing, colours and the
// alternate screen are applied, and Text and Scrollback return the result
// without escape codes. Programs that query the terminal (cursor position,
// device attributes) get the emulator's answers through the reply writer, which
// the caller connects to the pty master, so they do not wait for an answer that
// never comes.
package terminal

import (
	"bytes"
	"io"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
	"github.com/charmbracelet/x/vt"
)

// Defaults for New's arguments given as 0 or less.
const (
	DefaultCols       = 80
	DefaultRows       = 24
	DefaultScrollback = 1000
)

// maxPendingReply bounds the answers queued for a reply writer that does not
// accept them (a program that asks but never reads its input); beyond it,
// answers are dropped rather than blocking the screen.
const maxPendingReply = 64 << 10

// chunk is how much is fed to the emulator at a time, so that the lines it
// scrolls off during one piece always fit in its own small scrollback, from
// which they are moved to ours (see harvest).
const chunk = 512

// emulatorScrollback is the emulator's own scrollback size: enough for what one
// chunk can scroll off in all but contrived streams (CSI S with a huge count),
// and small, because the emulator drops its oldest line by copying the rest.
const emulatorScrollback = 4 * chunk

// A Screen is a terminal of a fixed size that output is written to. Write and
// the readers (Text, Scrollback) are safe for concurrent use.
type Screen struct {
	mu     sync.Mutex
	emu    *vt.Emulator
	hist   ring // lines scrolled off the top of the main screen, oldest first
	closed bool

	replyMu   sync.Mutex
	replyCond *sync.Cond
	pending   bytes.Buffer // answers not yet written to reply
	replyDone bool
	done      sync.WaitGroup
}

// New returns a screen of cols×rows cells (0 or less: 80×24) keeping up to
// scrollback lines that scrolled off its top (0 or less: DefaultScrollback).
// The emulator's answers to the program's queries are written to reply, which
// should be the pty master; nil discards them. Close stops the goroutines that
// deliver them.
func New(cols, rows, scrollback int, reply io.Writer) *Screen {
	if cols <= 0 {
		cols = DefaultCols
	}
	if rows <= 0 {
		rows = DefaultRows
	}
	if scrollback <= 0 {
		scrollback = DefaultScrollback
	}
	s := &Screen{emu: vt.NewEmulator(cols, rows), hist: ring{max: scrollback}}
	s.emu.SetScrollbackSize(emulatorScrollback)
	answers := s.emu.InputPipe()
	s.emu.RegisterCsiHandler('n', func(params ansi.Params) bool {
		// Operating status: the emulator answers in the DEC form (CSI ? 0 n),
		// which is the answer to CSI ? 5 n; terminals answer CSI 5 n with CSI 0 n.
		if n, _, _ := params.Param(0, 0); n == 5 {
			io.WriteString(answers, "\x1b[0n")
			return true
		}
		return false
	})
	boundCounts(s.emu, cols, rows)
	s.replyCond = sync.NewCond(&s.replyMu)
	s.done.Add(2)
	go s.readReplies()
	go s.writeReplies(reply)
	return s
}

// Write feeds the program's output to the screen. It never blocks on the reply
// writer and always accepts all of p, until Close.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, io.ErrClosedPipe
	}
	for rest := p; len(rest) > 0; {
		n := min(len(rest), chunk)
		s.emu.Write(rest[:n])
		rest = rest[n:]
		s.harvest()
	}
	return len(p), nil
}

// harvest moves the lines the emulator scrolled off into our history, as text.
func (s *Screen) harvest() {
	sb := s.emu.Scrollback()
	if sb.Len() == 0 {
		return
	}
	for _, line := range sb.Lines() {
		s.hist.push(strings.TrimRight(line.String(), " "))
	}
	sb.Clear()
}

// Text returns the visible screen as plain text: one line per row, without
// escape codes, trailing spaces and trailing empty lines; a wide character
// (CJK, emoji) appears once.
func (s *Screen) Text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(trimTrailingEmpty(s.screenLines()), "\n")
}

// Scrollback returns the last n lines of what was written, as plain text: the
// lines that scrolled off the top of the main screen followed by the visible
// screen, trailing empty lines dropped. n <= 0 returns all that is kept.
func (s *Screen) Scrollback(n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	lines := append(s.hist.lines(), s.screenLines()...)
	lines = trimTrailingEmpty(lines)
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Size returns the screen's width and height in cells.
func (s *Screen) Size() (cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.Width(), s.emu.Height()
}

// AltScreen reports whether the program switched to the alternate screen, as
// full-screen programs (editors, top, less) do.
func (s *Screen) AltScreen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.IsAltScreen()
}

// Close stops the screen: later writes fail, and answers not yet delivered are
// dropped. The text stays readable.
func (s *Screen) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		// Closing the emulator's answer pipe ends readReplies, which then ends
		// writeReplies. (Emulator.Close would do it too, but it sets a flag
		// that Read checks without a lock.)
		s.emu.InputPipe().(*io.PipeWriter).CloseWithError(io.EOF)
	}
	s.mu.Unlock()
	s.done.Wait()
	return nil
}

func (s *Screen) screenLines() []string {
	return strings.Split(s.emu.String(), "\n")
}

// readReplies takes the emulator's answers as it produces them, so that its
// Write never waits for the reply writer.
func (s *Screen) readReplies() {
	defer s.done.Done()
	buf := make([]byte, 1024)
	for {
		n, err := s.emu.Read(buf)
		s.replyMu.Lock()
		if n > 0 && s.pending.Len()+n <= maxPendingReply {
			s.pending.Write(buf[:n])
		}
		if err != nil {
			s.replyDone = true
		}
		s.replyCond.Signal()
		s.replyMu.Unlock()
		if err != nil {
			return
		}
	}
}

// writeReplies delivers the answers to w in order.
func (s *Screen) writeReplies(w io.Writer) {
	defer s.done.Done()
	for {
		s.replyMu.Lock()
		for s.pending.Len() == 0 && !s.replyDone {
			s.replyCond.Wait()
		}
		if s.replyDone {
			s.replyMu.Unlock()
			return
		}
		b := bytes.Clone(s.pending.Bytes())
		s.pending.Reset()
		s.replyMu.Unlock()
		if w != nil {
			w.Write(b) // a reply the program cannot take is lost, as on a real terminal that hung up
		}
	}
}

func trimTrailingEmpty(lines []string) []string {
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// ring keeps the last max lines.
type ring struct {
	max   int
	buf   []string
	start int // index of the oldest line once buf is full
}

func (r *ring) push(line string) {
	if len(r.buf) < r.max {
		r.buf = append(r.buf, line)
		return
	}
	r.buf[r.start] = line
	r.start = (r.start + 1) % r.max
}

// lines returns a copy, oldest first.
func (r *ring) lines() []string {
	out := make([]string, 0, len(r.buf))
	out = append(out, r.buf[r.start:]...)
	return append(out, r.buf[:r.start]...)
}

// boundCounts caps the count of the control sequences whose work grows with it,
// to what can change a cols×rows screen: the emulator does REP (ESC[999999999b,
// repeat the last character) one character at a time, and moves to a tab stop or
// erases one cell at a time, so a program printing such a count held the screen,
// and a CPU, for hours. Beyond the cap nothing on the screen would differ (REP
// fills the screen at cols×rows; more only scrolls the same line into history,
// and the cap keeps where the cursor ends).
func boundCounts(emu *vt.Emulator, cols, rows int) {
	for cmd, max := range map[int]int{
		'b': cols * rows, // REP
		'I': cols,        // CHT: forward tab stops
		'Z': cols,        // CBT: backward tab stops
		'X': cols,        // ECH: erase characters
		'@': cols,        // ICH: insert characters
		'P': cols,        // DCH: delete characters
		'L': rows,        // IL: insert lines
		'M': rows,        // DL: delete lines
		'S': rows,        // SU: scroll up
		'T': rows,        // SD: scroll down
	} {
		// Registered last, so called first: it caps the count in place and
		// leaves the sequence to the emulator's own handler, which sees the
		// same parameters.
		emu.RegisterCsiHandler(cmd, func(params ansi.Params) bool {
			if len(params) > 0 {
				v := int(params[0]) & parser.ParamMask
				if v != parser.MissingParam && v > max {
					capped := max
					if cmd == 'b' {
						// Keep the count's remainder by the width, so that the
						// cursor ends where the whole repetition would leave it.
						capped += (v - max) % cols
					}
					params[0] = ansi.Param(int(params[0])&^parser.ParamMask | capped)
				}
			}
			return false
		})
	}
}
