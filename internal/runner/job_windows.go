package runner

import (
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows a command's process group is a job object of its own: what it
// starts is in the job too, whether its parent is still alive or not, so
// TerminateJobObject ends all of it where taskkill /T misses the orphans. The
// job is created with JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE and its handle is held
// only by this process, so when shellgate exits — or is killed — the kernel
// closes it and kills whatever the command left running.
//
// The command is created suspended (CREATE_SUSPENDED, see prepare), put in its
// job, and only then resumed: assigning a process that already runs would let
// it start children outside the job in between. os/exec does not give the
// thread handle, so the initial thread is found in a Toolhelp snapshot.
//
// A job given by a Launcher (Wrapper.Job: a sandbox session's, with its limits)
// is assigned first; the command's own job then nests in it (Windows 8 and
// later), so the session's limits bind every command and closing it ends them.

// jobs are the command jobs still holding processes, by the PID of the process
// that started them; a reused PID adds a job to the list.
var jobs struct {
	mu    sync.Mutex
	byPID map[int][]windows.Handle
}

// adopt puts the suspended command in its job (and parent first, if given) and
// resumes it. Without a job of its own — the system refused one — the command
// still runs, and is ended with taskkill as before.
func adopt(cmd *exec.Cmd, parent uintptr) (Launched, error) {
	pid := cmd.Process.Pid
	fail := func(err error) (Launched, error) {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, err
	}
	proc, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return fail(fmt.Errorf("cannot open the new process: %w", err))
	}
	defer windows.CloseHandle(proc)
	if parent != 0 {
		if err := windows.AssignProcessToJobObject(windows.Handle(parent), proc); err != nil {
			return fail(fmt.Errorf("cannot put the command in the session's job object: %w", err))
		}
	}
	if job, err := newKillJob(); err == nil {
		if windows.AssignProcessToJobObject(job, proc) == nil {
			addJob(pid, job)
		} else {
			windows.CloseHandle(job)
		}
	}
	if err := resumeProcess(uint32(pid)); err != nil {
		dropJobs(pid, true)
		return fail(err)
	}
	return child{cmd}, nil
}

// newKillJob creates a job whose processes die when its last handle closes.
func newKillJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// resumeProcess resumes the threads of a process created suspended: its one
// initial thread.
func resumeProcess(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("cannot list the new process's threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	resumed := 0
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return fmt.Errorf("cannot resume the new process: %w", err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("cannot resume the new process: %w", err)
		}
		resumed++
	}
	if resumed == 0 {
		return errors.New("cannot resume the new process: no thread found")
	}
	return nil
}

func addJob(pid int, job windows.Handle) {
	jobs.mu.Lock()
	defer jobs.mu.Unlock()
	if jobs.byPID == nil {
		jobs.byPID = map[int][]windows.Handle{}
	}
	jobs.byPID[pid] = append(jobs.byPID[pid], job)
}

// dropJobs forgets pid's jobs and closes them, which kills what is left in
// them when kill is set, and is harmless for empty ones.
func dropJobs(pid int, kill bool) {
	jobs.mu.Lock()
	defer jobs.mu.Unlock()
	for _, j := range jobs.byPID[pid] {
		if kill {
			windows.TerminateJobObject(j, 1)
		}
		windows.CloseHandle(j)
	}
	delete(jobs.byPID, pid)
}

// killJobs terminates every process of pid's jobs; false when it has none.
// The handles stay open (jobMembers closes them once empty), and the lock is
// held so that none is closed, and its number reused, meanwhile.
func killJobs(pid int) bool {
	jobs.mu.Lock()
	defer jobs.mu.Unlock()
	for _, j := range jobs.byPID[pid] {
		windows.TerminateJobObject(j, 1)
	}
	return len(jobs.byPID[pid]) > 0
}

// processIDList is JOBOBJECT_BASIC_PROCESS_ID_LIST with room for 1024 PIDs;
// a job with more still reports how many it has.
type processIDList struct {
	Assigned uint32
	Listed   uint32
	IDs      [1024]uintptr
}

// jobMembers returns the live processes of the command started as pid, and
// closes its jobs once they are empty.
func jobMembers(pid int) []procID {
	jobs.mu.Lock()
	defer jobs.mu.Unlock()
	var live []procID
	keep := jobs.byPID[pid][:0]
	for _, j := range jobs.byPID[pid] {
		var l processIDList
		err := windows.QueryInformationJobObject(j, windows.JobObjectBasicProcessIdList,
			uintptr(unsafe.Pointer(&l)), uint32(unsafe.Sizeof(l)), nil)
		if err != nil && !errors.Is(err, windows.ERROR_MORE_DATA) {
			keep = append(keep, j) // cannot tell: keep it, closing would kill
			continue
		}
		if l.Assigned == 0 {
			windows.CloseHandle(j)
			continue
		}
		keep = append(keep, j)
		for _, id := range l.IDs[:min(l.Listed, uint32(len(l.IDs)))] {
			live = append(live, procID{PID: int(id)})
		}
	}
	if len(keep) == 0 {
		delete(jobs.byPID, pid)
	} else {
		jobs.byPID[pid] = keep
	}
	return live
}
