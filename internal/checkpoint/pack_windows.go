package checkpoint

import (
	"os"
	"os/exec"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows background git goes into a job object created with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE whose only handle this process holds
// and never closes: when shellgate exits or is killed, the kernel closes it
// and kills the pack. git is assigned just after it starts; pack-objects and
// prune-packed start no process of their own in that moment.
var packJobObject struct {
	once sync.Once
	h    windows.Handle // 0: the system refused one; Close still stops a pack
}

func dieWithParent(*exec.Cmd) {}

// afterStart puts p in the process's kill-on-close job.
func afterStart(p *os.Process) {
	packJobObject.once.Do(func() {
		job, err := windows.CreateJobObject(nil, nil)
		if err != nil {
			return
		}
		var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
		info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
		if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
			uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
			windows.CloseHandle(job)
			return
		}
		packJobObject.h = job
	})
	if packJobObject.h == 0 {
		return
	}
	proc, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		return
	}
	defer windows.CloseHandle(proc)
	windows.AssignProcessToJobObject(packJobObject.h, proc)
}
