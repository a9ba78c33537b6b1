package output

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// text assembles Result.Text from the head and tail shown (tail is nil unless the
// output was truncated), with bytes that are not UTF-8 shown as U+FFFD.
func (c *Capture) text(head, tail []byte, r Result) string {
	if !r.Truncated {
		return strings.ToValidUTF8(string(head), string(utf8.RuneError))
	}
	omitted := r.Total - int64(len(head)+len(tail))
	m := marker(omitted, r, c.opts.SpillMax)
	var b strings.Builder
	b.Grow(len(head) + 1 + len(m) + len(tail) + utf8.UTFMax)
	b.WriteString(strings.ToValidUTF8(string(head), string(utf8.RuneError)))
	if len(head) > 0 && head[len(head)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(m)
	b.WriteString(strings.ToValidUTF8(string(tail), string(utf8.RuneError)))
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
