package hostscan

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// SocketOf finds, in the network namespace of process pid (0: our own), the
// TCP socket whose own address is local and whose peer's is peer (the
// client's end of a connection accepted from local on peer), and returns its
// inode: what the holder's /proc/PID/fd links name as socket:[INODE]. Both
// addresses, not the ports alone: a namespace's loopback has more than one
// address (127.0.0.2, ::1, ::ffff:127.0.0.1), from each of which another
// socket may have the same two ports. An IPv4-mapped address is its IPv4
// address (a v6 socket's connection to the v4 proxy is in tcp6).
func SocketOf(pid int, local, peer netip.AddrPort) (inode uint64, ok bool) {
	proc := "self"
	if pid > 0 {
		proc = strconv.Itoa(pid)
	}
	local = netip.AddrPortFrom(local.Addr().Unmap(), local.Port())
	peer = netip.AddrPortFrom(peer.Addr().Unmap(), peer.Port())
	for _, name := range []string{"tcp", "tcp6"} {
		if inode, ok := socketIn("/proc/"+proc+"/net/"+name, local, peer); ok {
			return inode, true
		}
	}
	return 0, false
}

// socketIn scans a /proc/net/tcp table ("sl local_address rem_address st
// tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …") for the
// socket from local to peer.
func socketIn(path string, local, peer netip.AddrPort) (uint64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] == "0A" {
			continue
		}
		if l, ok := parseAddr(fields[1]); !ok || l != local {
			continue
		}
		if p, ok := parseAddr(fields[2]); !ok || p != peer {
			continue
		}
		if inode, err := strconv.ParseUint(fields[9], 10, 64); err == nil && inode != 0 {
			return inode, true
		}
	}
	return 0, false
}

// parseAddr reads a /proc/net/tcp address, "ADDR:PORT" in hex: the address
// as the kernel holds it, 32-bit words in the host's byte order, the port
// as a number; an IPv4-mapped address is returned as its IPv4 address.
func parseAddr(s string) (netip.AddrPort, bool) {
	a, p, ok := strings.Cut(s, ":")
	port, err := strconv.ParseUint(p, 16, 16)
	raw, herr := hex.DecodeString(a)
	if !ok || err != nil || herr != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, false
	}
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(raw[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), true
}

// HoldsSocket reports whether process pid has socket inode open.
func HoldsSocket(pid int, inode uint64) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	names, _ := f.Readdirnames(-1) // unsorted
	f.Close()
	want := "socket:[" + strconv.FormatUint(inode, 10) + "]"
	for _, n := range names {
		if link, err := os.Readlink(dir + n); err == nil && link == want {
			return true
		}
	}
	return false
}
