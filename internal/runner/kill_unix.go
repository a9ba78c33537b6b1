//go:build unix

package runner

import (
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// prepare puts the command in a new session: it becomes the leader of a new
// process group, which can be signalled as a whole, and has no controlling
// terminal, so a program opening /dev/tty fails with ENXIO instead of waiting.
func prepare(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// prepareTerminal makes the command's stdin, a terminal, its controlling
// terminal once it leads its new session.
func prepareTerminal(cmd *exec.Cmd) error {
	cmd.SysProcAttr.Setctty = true
	cmd.SysProcAttr.Ctty = 0 // the child's fd 0
	return nil
}

func (t targets) signal(sig unix.Signal) {
	for _, g := range t.groups {
		signalGroup(g, sig)
	}
	for _, tr := range t.trees {
		tr.l.KillTree(tr.pid, sig)
	}
	for _, p := range markedProcs(t.marker, t.scope) {
		unix.Kill(p.PID, sig)
	}
}

// alive returns the target processes still alive (zombies count as gone).
func (t targets) alive() []procID {
	var live []procID
	for _, g := range t.groups {
		live = append(live, groupMembers(g, t.scope)...)
	}
	for _, tr := range t.trees {
		for _, pid := range tr.l.Tree(tr.pid) {
			live = append(live, procID{PID: pid})
		}
	}
	return append(live, markedProcs(t.marker, t.scope)...)
}

// terminate sends SIGTERM to the targets, gives them grace to exit, sends SIGKILL
// to whatever is left (including processes started meanwhile) and waits until
// they are gone. It returns those still alive after all that (none, normally).
func terminate(t targets, grace time.Duration) []procID {
	if len(t.groups) == 0 && len(t.trees) == 0 && t.marker == nil {
		return nil
	}
	// The common case, a Close after commands that left nothing: one look at
	// /proc instead of one per signal and wait. None alive means none to come:
	// a marked process descends from a marked one, and no run is in flight.
	if len(t.alive()) == 0 {
		return nil
	}
	t.signal(unix.SIGTERM)
	t.signal(unix.SIGCONT) // a stopped process acts on SIGTERM only once continued
	if waitGone(t, grace) {
		return nil
	}
	// A few rounds: a process may fork between the scan and the signal.
	for range 10 {
		t.signal(unix.SIGKILL)
		if waitGone(t, 100*time.Millisecond) {
			return nil
		}
	}
	return t.alive()
}

// waitGone polls until the targets are gone or limit has passed.
func waitGone(t targets, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	pause := time.Millisecond
	for {
		if len(t.alive()) == 0 {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(pause, left))
		pause = min(2*pause, 25*time.Millisecond)
	}
}

// exitStatus returns the exit code, or the name of the signal that ended the process.
func exitStatus(ps *os.ProcessState) (*int, string) {
	if ps == nil {
		return nil, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return nil, unix.SignalName(ws.Signal())
	}
	code := ps.ExitCode()
	return &code, ""
}

// groupExists reports whether any process, zombies included, is in group pgid.
// It is one system call, so the common case of an empty group costs no scan.
func groupExists(pgid int) bool {
	err := signalGroup(pgid, 0)
	return err == nil || err == unix.EPERM
}

// signalGroup signals process group pgid. It refuses pgid 0 and 1: kill(0) is our
// own group and kill(-1) is every process we may signal.
func signalGroup(pgid int, sig unix.Signal) error {
	if pgid <= 1 {
		return unix.ESRCH
	}
	return unix.Kill(-pgid, sig)
}

// groupLeft reports whether group pgid may still have members once its
// shell was reaped (collect).
func groupLeft(pgid int) bool { return groupExists(pgid) }
