package output

import (
	"fmt"
	"strings"
)

// text assembles Result.Text of truncated output from the head and tail shown, and
// reports whether sanitize removed anything from them.
func (c *Capture) text(head, tail []byte, r Result) (string, bool) {
	omitted := r.Total - int64(len(head)+len(tail))
	m := marker(omitted, r)
	h, hc := sanitize(head)
	t, tc := sanitize(tail)
	var b strings.Builder
	b.Grow(len(h) + 1 + len(m) + len(t))
	b.WriteString(h)
	if len(head) > 0 && head[len(head)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(m)
	b.WriteString(t)
	return b.String(), hc || tc
}

// marker is the line standing for the omitted middle of the output. It says where the
// complete output is, or why it is not.
func marker(omitted int64, r Result) string {
	var where string
	switch {
	case r.SpillPath == "" && r.SpillErr != nil:
		where = fmt.Sprintf("full output not saved: %v", r.SpillErr)
	case r.SpillPath == "":
		where = "full output not saved"
	case r.SpillCapped:
		where = fmt.Sprintf("full output (first %d bytes only): %s", r.SpillSize, r.SpillPath)
	default:
		where = "full output: " + r.SpillPath
	}
	return fmt.Sprintf("... [%d bytes omitted; %s] ...\n", omitted, where)
}
