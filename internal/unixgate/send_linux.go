package unixgate

import (
	"encoding/binary"
	"runtime"
	"strconv"
	"unsafe"

	"github.com/shellgate/shellgate/internal/notify"
	"golang.org/x/sys/unix"
)

// Limits the kernel sets on what a call may carry.
const (
	maxAddr    = 128     // sizeof(struct sockaddr_storage)
	maxIov     = 1024    // UIO_MAXIOV
	maxControl = 1 << 17 // about optmem_max
	// maxData is what the supervisor copies of one call: a stream socket
	// sends less (the caller sends the rest), a datagram is refused
	// (EMSGSIZE), as it would be past the socket's send buffer.
	maxData = 4 << 20
)

// A sock is the caller's socket, as the supervisor holds it.
type sock struct {
	c  *notify.Caller
	fd int
}

// route checks where addr leads and returns what to use instead: for a
// pathname address of a unix socket, /proc/self/fd/N of the socket file
// the supervisor opened, once it is known to be bound in the session, so
// that the kernel reaches that file and no other. done releases it.
func (s *sock) route(addr []byte) (_ []byte, done func(), _ unix.Errno) {
	done = func() {}
	if len(addr) <= 2 || binary.NativeEndian.Uint16(addr) != unix.AF_UNIX || addr[2] == 0 {
		return addr, done, 0 // not a path: abstract names and others stay in the session's namespaces
	}
	// Only a unix socket takes the address as a path (another refuses it).
	if domain, err := unix.GetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_DOMAIN); err != nil || domain != unix.AF_UNIX {
		return addr, done, 0
	}
	path := addr[2:]
	for i, b := range path {
		if b == 0 {
			path = path[:i]
			break
		}
	}
	file, errno := resolve(s.c, string(path))
	if errno != 0 {
		return nil, done, errno
	}
	done = func() { unix.Close(file) }
	var st unix.Stat_t
	if err := unix.Fstat(file, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return nil, done, unix.ECONNREFUSED
	}
	inSession, err := boundInSession(st.Dev, st.Ino)
	if err != nil {
		return nil, done, unix.EACCES // unknown is not the session's
	}
	if !inSession {
		return nil, done, unix.EACCES
	}
	return sockaddr("/proc/self/fd/" + strconv.Itoa(file)), done, 0
}

// sockaddr is a struct sockaddr_un holding path.
func sockaddr(path string) []byte {
	b := make([]byte, 2+len(path)+1)
	binary.NativeEndian.PutUint16(b, unix.AF_UNIX)
	copy(b[2:], path)
	return b
}

func ptr(b []byte) uintptr {
	if len(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&b[0]))
}

func (s *sock) address(at, n uint64) ([]byte, unix.Errno) {
	if n > maxAddr {
		return nil, unix.EINVAL
	}
	return s.c.Read(at, int(n))
}

func (s *sock) connect(at, n uint64) unix.Errno {
	addr, errno := s.address(at, n)
	if errno != 0 {
		return errno
	}
	addr, done, errno := s.route(addr)
	defer done()
	if errno != 0 {
		return errno
	}
	_, _, errno = unix.Syscall(unix.SYS_CONNECT, uintptr(s.fd), ptr(addr), uintptr(len(addr)))
	runtime.KeepAlive(addr)
	return errno
}

func (s *sock) sendto(buf, n uint64, flags int, at, addrLen uint64) (int64, unix.Errno) {
	addr, errno := s.address(at, addrLen)
	if errno != 0 {
		return 0, errno
	}
	data, errno := s.data([][2]uint64{{buf, n}})
	if errno != 0 {
		return 0, errno
	}
	return s.send(data, addr, nil, flags)
}

// send sends what the caller asked for, and raises SIGPIPE in the caller
// where the kernel would have.
func (s *sock) send(data, addr, control []byte, flags int) (int64, unix.Errno) {
	addr, done, errno := s.route(addr)
	defer done()
	if errno != 0 {
		return 0, errno
	}
	var iov unix.Iovec
	if len(data) > 0 {
		iov.Base = &data[0]
	}
	iov.SetLen(len(data))
	msg := unix.Msghdr{Iov: &iov, Iovlen: 1}
	if len(addr) > 0 {
		msg.Name, msg.Namelen = &addr[0], uint32(len(addr))
	}
	if len(control) > 0 {
		msg.Control = &control[0]
		msg.SetControllen(len(control))
	}
	r, _, errno := unix.Syscall(unix.SYS_SENDMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&msg)), uintptr(flags|unix.MSG_NOSIGNAL))
	runtime.KeepAlive(data)
	runtime.KeepAlive(addr)
	runtime.KeepAlive(control)
	if errno == unix.EPIPE && flags&unix.MSG_NOSIGNAL == 0 {
		s.c.Signal(unix.SIGPIPE)
	}
	if errno != 0 {
		return 0, errno
	}
	return int64(r), 0
}

// data gathers the caller's buffers, up to maxData.
func (s *sock) data(iovs [][2]uint64) ([]byte, unix.Errno) {
	var total uint64
	for _, v := range iovs {
		total += min(v[1], maxData+1) // no overflow
	}
	if total > maxData {
		if typ, _ := unix.GetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_TYPE); typ != unix.SOCK_STREAM {
			return nil, unix.EMSGSIZE
		}
		total = maxData
	}
	out := make([]byte, 0, total)
	for _, v := range iovs {
		n := min(v[1], total-uint64(len(out)))
		b, errno := s.c.Read(v[0], int(n))
		if errno != 0 {
			return nil, errno
		}
		out = append(out, b...)
	}
	return out, 0
}

// msghdrSize is sizeof(struct msghdr) and mmsghdrSize sizeof(struct
// mmsghdr) on the 64-bit systems the filter is built for.
const msghdrSize, mmsghdrSize = 56, 64

func (s *sock) sendmsg(at uint64, flags int) (int64, unix.Errno) {
	h, errno := s.c.Read(at, msghdrSize)
	if errno != 0 {
		return 0, errno
	}
	u64 := func(off int) uint64 { return binary.NativeEndian.Uint64(h[off:]) }
	name, nameLen := u64(0), uint64(binary.NativeEndian.Uint32(h[8:]))
	iovAt, iovLen, ctlAt, ctlLen := u64(16), u64(24), u64(32), u64(40)
	var addr []byte
	if name != 0 {
		if addr, errno = s.c.Read(name, int(min(nameLen, maxAddr))); errno != 0 {
			return 0, errno
		}
	}
	if iovLen > maxIov {
		return 0, unix.EMSGSIZE
	}
	raw, errno := s.c.Read(iovAt, int(iovLen)*16)
	if errno != 0 {
		return 0, errno
	}
	iovs := make([][2]uint64, iovLen)
	for i := range iovs {
		iovs[i] = [2]uint64{binary.NativeEndian.Uint64(raw[16*i:]), binary.NativeEndian.Uint64(raw[16*i+8:])}
	}
	data, errno := s.data(iovs)
	if errno != 0 {
		return 0, errno
	}
	if ctlLen > maxControl {
		return 0, unix.ENOBUFS
	}
	control, errno := s.c.Read(ctlAt, int(ctlLen))
	if errno != 0 {
		return 0, errno
	}
	control, fds, errno := translate(s.c, control)
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	if errno != 0 {
		return 0, errno
	}
	return s.send(data, addr, control, flags)
}

func (s *sock) sendmmsg(at uint64, n uint32, flags int) (int64, unix.Errno) {
	n = min(n, maxIov)
	var sent uint32
	for ; sent < n; sent++ {
		hdr := at + uint64(sent)*mmsghdrSize
		r, errno := s.sendmsg(hdr, flags)
		if errno == 0 {
			errno = s.c.Write(hdr+msghdrSize, binary.NativeEndian.AppendUint32(nil, uint32(r)))
		}
		if errno != 0 {
			if sent == 0 {
				return 0, errno
			}
			break
		}
	}
	return int64(sent), 0
}

// translate makes the caller's control messages the supervisor's: the
// descriptors of SCM_RIGHTS are the caller's, fetched (and returned, to
// close after the send). Credentials are refused: the supervisor may claim
// any, the caller only its own.
func translate(c *notify.Caller, control []byte) ([]byte, []int, unix.Errno) {
	if len(control) == 0 {
		return nil, nil, 0
	}
	msgs, err := unix.ParseSocketControlMessage(control)
	if err != nil {
		return nil, nil, unix.EINVAL
	}
	var out []byte
	var fds []int
	for _, m := range msgs {
		if m.Header.Level != unix.SOL_SOCKET {
			out = append(out, cmsg(m.Header.Level, m.Header.Type, m.Data)...)
			continue
		}
		switch m.Header.Type {
		case unix.SCM_RIGHTS:
			for i := 0; i+4 <= len(m.Data); i += 4 {
				fd, errno := c.Getfd(int(int32(binary.NativeEndian.Uint32(m.Data[i:]))))
				if errno != 0 {
					return nil, fds, unix.EBADF
				}
				fds = append(fds, fd)
			}
			out = append(out, unix.UnixRights(fds[len(fds)-len(m.Data)/4:]...)...)
		case unix.SCM_CREDENTIALS:
			return nil, fds, unix.EPERM
		default:
			out = append(out, cmsg(m.Header.Level, m.Header.Type, m.Data)...)
		}
	}
	return out, fds, 0
}

// cmsg encodes one control message.
func cmsg(level, typ int32, data []byte) []byte {
	b := make([]byte, unix.CmsgSpace(len(data)))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
	h.Level, h.Type = level, typ
	h.SetLen(unix.CmsgLen(len(data)))
	copy(b[unix.CmsgLen(0):], data)
	return b
}
