package inherit

import "os"

// Pipe makes a pipe for a program to be started: child, the end to hand it
// (its stdin when childReads, else an output), stays a plain blocking
// descriptor, and ours, the other end, is this process's to read or write
// through the runtime's poller. os.Pipe makes both ends non-blocking and adds
// both to the poller; the child's end then went back to blocking when handed
// over (File.Fd) and out of the poller when closed: ten calls a pipe, four
// pipes an MCP call, for an end this process never reads or writes.
func Pipe(childReads bool) (ours, child *os.File, err error) {
	return pipe(childReads)
}
