package unixgate

import (
	"encoding/binary"
	"errors"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// sock_diag's unix request and answer (linux/unix_diag.h).
const (
	udiagShowVFS = 0x2
	unixDiagVFS  = 1
	diagMsgSize  = 16 // struct unix_diag_msg
)

type unixDiagReq struct {
	family, protocol uint8
	pad              uint16
	states           uint32
	ino              uint32
	show             uint32
	cookie           [2]uint32
}

// boundInSession reports whether a socket of this network namespace — the
// session's: a host's socket lives in the host's — is bound to the socket
// file (dev, ino) as stat reads it. sock_diag gives the file's inode number
// in 32 bits and its device as the kernel encodes it.
func boundInSession(dev, ino uint64) (bool, error) {
	s, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return false, err
	}
	defer unix.Close(s)
	type request struct {
		h   unix.NlMsghdr
		req unixDiagReq
	}
	r := request{
		h:   unix.NlMsghdr{Type: unix.SOCK_DIAG_BY_FAMILY, Flags: unix.NLM_F_REQUEST | unix.NLM_F_DUMP, Seq: 1},
		req: unixDiagReq{family: unix.AF_UNIX, states: ^uint32(0), show: udiagShowVFS},
	}
	r.h.Len = uint32(unsafe.Sizeof(r))
	if err := unix.Sendto(s, unsafe.Slice((*byte)(unsafe.Pointer(&r)), unsafe.Sizeof(r)), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return false, err
	}
	wantDev := uint32(unix.Major(dev))<<20 | uint32(unix.Minor(dev))
	found := false
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(s, buf, 0)
		if err != nil {
			return false, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return false, err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case syscall.NLMSG_DONE:
				return found, nil
			case syscall.NLMSG_ERROR:
				return false, errors.New("sock_diag: the dump failed")
			}
			if len(m.Data) < diagMsgSize {
				continue
			}
			// Its attributes follow struct unix_diag_msg.
			for b := m.Data[diagMsgSize:]; len(b) >= 4; {
				l, t := int(binary.NativeEndian.Uint16(b)), binary.NativeEndian.Uint16(b[2:])
				if l < 4 || l > len(b) {
					break
				}
				if t == unixDiagVFS && l >= 12 {
					vino, vdev := binary.NativeEndian.Uint32(b[4:]), binary.NativeEndian.Uint32(b[8:])
					found = found || vino == uint32(ino) && vdev == wantDev
				}
				b = b[min((l+3)&^3, len(b)):]
			}
		}
	}
}
