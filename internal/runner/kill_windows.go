package runner

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// prepare starts the command in a new process group, suspended until adopt has
// put it in its job object, and gives cmd.exe its command line verbatim (see
// cmdExeLine).
func prepare(cmd *exec.Cmd) {
	attr := &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | windows.CREATE_SUSPENDED}
	if line, ok := cmdExeLine(cmd.Path, cmd.Args); ok {
		attr.CmdLine = line
	}
	cmd.SysProcAttr = attr
}

// prepareTerminal fails: Windows has no pseudo-terminals of this kind (ConPTY
// is future work).
func prepareTerminal(*exec.Cmd) error { return ErrNoTerminal }

func (t targets) alive() []procID {
	var live []procID
	for _, pid := range t.groups {
		live = append(live, jobMembers(pid)...)
	}
	return live
}

// terminate ends each command at once — every process of its job, including
// those whose parent has exited — or, without a job, its process tree with
// taskkill. Windows has no SIGTERM for console programs that a grace period
// could honour. It waits, briefly, until the jobs are empty.
func terminate(t targets, grace time.Duration) []procID {
	for _, pid := range t.groups {
		if !killJobs(pid) {
			exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(pid)).Run()
		}
	}
	deadline := time.Now().Add(min(grace, time.Second) + time.Second)
	for len(t.alive()) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
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

// groupMembers returns the live processes of the command started as pid: its
// job's (none without a job).
func groupMembers(pid int, _ Launcher) []procID { return jobMembers(pid) }

// liveOf returns the live processes of the command's job: a job's members are
// the command's by construction, so there is no reused PID to tell apart.
func liveOf(pid int, _ []procID) []procID { return jobMembers(pid) }

// membersAmong returns the live members of command pid's job (no tree
// launcher here).
func membersAmong(pid int, _ []int) []procID { return jobMembers(pid) }

// unread is unknown on Windows; an idle pipe is told only by its Read not returning.
func unread(*os.File) int { return 0 }

// markedProcs finds nothing on Windows: a command's descendants are in its job.
func markedProcs([]byte, Launcher) []procID { return nil }

// groupLeft says a job may still have members: Windows is not asked.
func groupLeft(int) bool { return true }
