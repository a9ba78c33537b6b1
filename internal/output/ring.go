package output

// ring keeps the last len(buf) bytes written to it.
type ring struct {
	buf    []byte
	pos    int  // index of the oldest byte, where the next write goes
	before byte // the byte just before the oldest one kept, to tell if the tail starts a line
}

func (r *ring) write(p []byte) {
	size := len(r.buf)
	if len(p) == 0 {
		return
	}
	if len(p) > size {
		r.before = p[len(p)-size-1]
		copy(r.buf, p[len(p)-size:])
		r.pos = 0
		return
	}
	r.before = r.buf[(r.pos+len(p)-1)%size]
	n := copy(r.buf[r.pos:], p)
	copy(r.buf, p[n:])
	r.pos = (r.pos + len(p)) % size
}

// linear returns the kept bytes in order, in a new slice.
func (r *ring) linear() []byte {
	out := make([]byte, 0, len(r.buf))
	out = append(out, r.buf[r.pos:]...)
	return append(out, r.buf[:r.pos]...)
}
