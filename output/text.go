package output

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// text assembles Result.Text from the kept head and tail (tail is nil unless the
// output overflowed). partialEnd says the last 1-3 bytes of the kept text are an
// incomplete rune, shown as U+FFFD.
func (c *Capture) text(head, tail []byte, partialEnd bool, r Result) string {
	var b strings.Builder
	if !c.overflowed {
		b.Grow(len(head) + utf8.UTFMax)
		b.Write(head)
		if partialEnd {
			b.WriteRune(utf8.RuneError)
		}
		return b.String()
	}
	omitted := r.Total - int64(len(head)+len(tail))
	end := tail
	if partialEnd {
		end = tail[:len(tail)-incompleteSuffix(tail)]
	}
	m := marker(omitted, r, c.opts.SpillMax)
	b.Grow(len(head) + 1 + len(m) + len(tail) + utf8.UTFMax)
	b.Write(head)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(m)
	b.Write(end)
	if partialEnd {
		b.WriteRune(utf8.RuneError)
	}
	return b.String()
}

// marker is the line standing for the omitted middle of the output. It says where the
// complete output is, or why it is not.
func marker(omitted int64, r Result, spillMax int64) string {
	var where string
	switch {
	case r.SpillPath == "" && r.SpillErr != nil:
		where = fmt.Sprintf("full output not saved: %v", r.SpillErr)
	case r.SpillPath == "":
		where = "full output not saved"
	case r.SpillCapped:
		where = fmt.Sprintf("full output (first %d bytes only): %s", spillMax, r.SpillPath)
	default:
		where = "full output: " + r.SpillPath
	}
	return fmt.Sprintf("... [%d bytes omitted; %s] ...\n", omitted, where)
}
