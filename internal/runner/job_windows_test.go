package runner

import (
	"bytes"
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// cmdArgv is argv for cmd.exe running script, as package shell builds it.
func cmdArgv(t *testing.T, script string) []string {
	t.Helper()
	path, err := exec.LookPath("cmd.exe")
	if err != nil {
		t.Skip("cmd.exe not found")
	}
	return []string{path, "/d", "/s", "/c", script}
}

// processAlive reports whether a process with this PID is still running.
func processAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, _ := windows.WaitForSingleObject(h, 0)
	return ev == uint32(windows.WAIT_TIMEOUT)
}

// A background process outlives the command that started it, is reported, and
// dies with Close although its parent has long exited.
func TestJobHoldsBackground(t *testing.T) {
	s := NewSupervisor()
	res, err := s.Run(context.Background(), Spec{Argv: cmdArgv(t, "start /b ping -n 60 127.0.0.1 >NUL")})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.BackgroundPIDs) == 0 {
		t.Fatal("the background ping is not reported")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range res.BackgroundPIDs {
		if processAlive(pid) {
			t.Errorf("background process %d survived Close", pid)
		}
	}
}

// A timeout ends the command's orphans too, which taskkill /T cannot find.
func TestJobTimeoutKillsOrphans(t *testing.T) {
	s := NewSupervisor()
	defer s.Close()
	script := `start /b cmd /d /c "ping -n 60 127.0.0.1 >NUL" & ping -n 60 127.0.0.1 >NUL`
	res, err := s.Run(context.Background(), Spec{Argv: cmdArgv(t, script), Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Fatalf("not timed out: %+v", res)
	}
	if left := jobMembers(res.PID); len(left) > 0 {
		t.Errorf("processes left in the job after the timeout: %v", left)
	}
}

// The command runs: it was resumed after going into its job.
func TestJobCommandRuns(t *testing.T) {
	s := NewSupervisor()
	defer s.Close()
	var out bytes.Buffer // Run writes nothing after it returns
	res, err := s.Run(context.Background(), Spec{Argv: cmdArgv(t, "echo hi"), Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == nil || *res.ExitCode != 0 || !slices.Contains([]string{"hi\r\n", "hi\n"}, out.String()) {
		t.Errorf("exit %v, output %q", res.ExitCode, out.String())
	}
}
