package hostscan

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// TCPListening reports whether a TCP socket listens on port in the network
// namespace of process pid (0: our own), from /proc/PID/net/tcp and tcp6: the
// session's namespace cannot be dialled from here, but it can be read.
func TCPListening(pid, port int) bool {
	proc := "self"
	if pid > 0 {
		proc = strconv.Itoa(pid)
	}
	for _, name := range []string{"tcp", "tcp6"} {
		if listensIn(fmt.Sprintf("/proc/%s/net/%s", proc, name), port) {
			return true
		}
	}
	return false
}

// listensIn scans a /proc/net/tcp table: "sl local_address rem_address st …",
// addresses as HEXIP:HEXPORT, state 0A for LISTEN.
func listensIn(path string, port int) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	want := fmt.Sprintf(":%04X", port)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 3 && fields[3] == "0A" && strings.HasSuffix(fields[1], want) {
			return true
		}
	}
	return false
}
