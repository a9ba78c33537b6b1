package runner

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// prepare starts the command in a new process group, and gives cmd.exe its command
// line verbatim (see cmdExeLine).
func prepare(cmd *exec.Cmd) {
	attr := &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
	if line, ok := cmdExeLine(cmd.Path, cmd.Args); ok {
		attr.CmdLine = line
	}
	cmd.SysProcAttr = attr
}

type procID struct {
	PID   int
	Start uint64
}

// targets on Windows are process trees named by their root PID; markers are not used.
type targets struct {
	groups []int
	marker []byte
	scope  func(pid int) bool
}

func (t targets) alive() []procID { return nil }

// terminate ends each process tree at once: Windows has no SIGTERM for console
// programs that a grace period could honour.
func terminate(t targets, grace time.Duration) []procID {
	for _, pid := range t.groups {
		kill := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pid))
		kill.Run()
	}
	return nil
}

func exitStatus(ps *os.ProcessState) (*int, string) {
	if ps == nil {
		return nil, ""
	}
	code := ps.ExitCode()
	return &code, ""
}

func enlargePipe(*os.File) {}

func groupMembers(int) []procID     { return nil }
func liveOf(int, []procID) []procID { return nil }

// unread is unknown on Windows; an idle pipe is told only by its Read not returning.
func unread(*os.File) int { return 0 }

// markedProcs finds nothing on Windows: process trees are ended by taskkill /T.
func markedProcs([]byte, func(int) bool) []procID { return nil }
