package runner

import (
	"io"
	"os"

	"github.com/shellgate/shellgate/internal/inherit"
)

// pipeSet holds our own pipes for stdout and stderr. The child gets the write ends
// as plain files, so exec.Cmd starts no copying goroutines and its Wait does not
// wait for background descendants that inherited them.
type pipeSet struct {
	ours  [2]*os.File // read ends, index 0 stdout, 1 stderr; nil for a discarded or passed stream
	child [2]*os.File // write ends, or the caller's own file (passed)
	// passed: child is the caller's file (Spec.PassStdout, PassStderr), not
	// ours to close.
	passed [2]bool
}

func (ps *pipeSet) open(spec Spec) error {
	pass := [2]bool{spec.PassStdout, spec.PassStderr}
	for i, w := range [2]io.Writer{spec.Stdout, spec.Stderr} {
		if w == nil {
			continue // exec.Cmd connects the stream to the null device
		}
		if f, ok := w.(*os.File); ok && pass[i] {
			ps.child[i], ps.passed[i] = f, true
			continue
		}
		if i == 1 && ps.child[0] != nil && !ps.passed[0] && sameFile(spec.Stdout, spec.Stderr) {
			// Both go to one file (2>&1, a terminal): one pipe for both, so
			// that what the command wrote to each arrives in its order.
			ps.child[1] = ps.child[0]
			continue
		}
		r, wr, err := inherit.Pipe(false)
		if err != nil {
			ps.closeChildEnds()
			ps.closeOurEnds()
			return err
		}
		ps.ours[i], ps.child[i] = r, wr
	}
	return nil
}

func (ps *pipeSet) closeChildEnds() {
	for i, f := range ps.child {
		if f != nil && !ps.passed[i] {
			f.Close() // a second Close of one shared by both: an error, ignored
		}
		ps.child[i] = nil
	}
}

// sameFile reports whether a and b are open files of one file: the caller's
// own stdout and stderr, say, both the pipe or file an agent reads.
func sameFile(a, b io.Writer) bool {
	fa, ok1 := a.(*os.File)
	fb, ok2 := b.(*os.File)
	if !ok1 || !ok2 {
		return false
	}
	if fa == fb {
		return true
	}
	sa, err1 := fa.Stat()
	sb, err2 := fb.Stat()
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

func (ps *pipeSet) closeOurEnds() {
	for i, f := range ps.ours {
		if f != nil {
			f.Close()
			ps.ours[i] = nil
		}
	}
}

func (ps *pipeSet) start(spec Spec) []*pump {
	pumps := make([]*pump, 0, 2)
	for i, w := range [2]io.Writer{spec.Stdout, spec.Stderr} {
		if ps.ours[i] != nil {
			pumps = append(pumps, startPump(ps.ours[i], w))
		}
	}
	return pumps
}
