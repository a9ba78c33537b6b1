package hostscan

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// SocketOf finds, in the network namespace of process pid (0: our own), the
// TCP socket whose local port is local and whose peer's port is peer (the
// client's end of a connection accepted on peer), and returns its inode:
// what the holder's /proc/PID/fd links name as socket:[INODE]. Ports alone
// tell the socket apart in a namespace whose only network is its loopback.
func SocketOf(pid, local, peer int) (inode uint64, ok bool) {
	proc := "self"
	if pid > 0 {
		proc = strconv.Itoa(pid)
	}
	l, p := fmt.Sprintf(":%04X", local), fmt.Sprintf(":%04X", peer)
	for _, name := range []string{"tcp", "tcp6"} {
		if inode, ok := socketIn(fmt.Sprintf("/proc/%s/net/%s", proc, name), l, p); ok {
			return inode, true
		}
	}
	return 0, false
}

// socketIn scans a /proc/net/tcp table ("sl local_address rem_address st
// tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …") for the
// socket from local to peer, both ":PORT" in hex.
func socketIn(path, local, peer string) (uint64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] == "0A" || !strings.HasSuffix(fields[1], local) || !strings.HasSuffix(fields[2], peer) {
			continue
		}
		if inode, err := strconv.ParseUint(fields[9], 10, 64); err == nil && inode != 0 {
			return inode, true
		}
	}
	return 0, false
}

// HoldsSocket reports whether process pid has socket inode open.
func HoldsSocket(pid int, inode uint64) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	names, err := readNames(dir)
	if err != nil {
		return false
	}
	want := "socket:[" + strconv.FormatUint(inode, 10) + "]"
	for _, n := range names {
		if link, err := os.Readlink(dir + n); err == nil && link == want {
			return true
		}
	}
	return false
}

// readNames lists a directory's names, unsorted.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
