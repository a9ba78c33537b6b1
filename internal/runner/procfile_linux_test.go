package runner

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"
)

// readEnviron reads a process's environment whole.
func TestReadEnviron(t *testing.T) {
	buf := make([]byte, 0, 16)
	// The process's own environment, as the marker scan reads it.
	env, err := readEnviron(os.Getpid(), &buf)
	if err != nil || !bytes.Contains(env, []byte("PATH=")) {
		t.Errorf("own environ: %v %.100q", err, env)
	}
}

// A task directory is listed whole.
func TestDirNames(t *testing.T) {
	names, err := dirNames("/proc/self/task", make([]byte, 4096))
	entries, err2 := os.ReadDir("/proc/self/task")
	if err != nil || err2 != nil || len(names) != len(entries) {
		t.Errorf("/proc/self/task: %d names (%v), %d entries (%v)", len(names), err, len(entries), err2)
	}
}

// threads knows a process of one thread from its task directory's link
// count, and lists the threads of one that has more.
func TestThreads(t *testing.T) {
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	pid := sleep.Process.Pid
	if got, err := threads(pid, fmt.Sprintf("/proc/%d/task", pid), make([]byte, 4096)); err != nil || len(got) != 1 || got[0] != strconv.Itoa(pid) {
		t.Errorf("sleep: %q, %v", got, err)
	}
	entries, _ := os.ReadDir("/proc/self/task")
	got, err := threads(os.Getpid(), "/proc/self/task", make([]byte, 4096))
	if err != nil || len(entries) < 2 || len(got) != len(entries) {
		t.Errorf("this process: %d threads (%v), %d entries", len(got), err, len(entries))
	}
	if _, err := threads(pid, "/proc/0/task", make([]byte, 4096)); err == nil {
		t.Error("no such process: no error")
	}
}

// A process that is replacing itself (execve) is still found by its marker:
// a read through the memory of before the execve, which the open file keeps,
// reads an empty environment though the new one is in place, and was taken
// for a process that cleared its environment (a background job missed, 1 in
// ~1000 calls of `setsid sleep 30 &`).
func TestReadEnvironAcrossExec(t *testing.T) {
	lane.Live(t)
	// The shell replaces itself 3000 times, its environment kept each time;
	// without address randomization (as under the race detector, which re-runs
	// itself so) each image's environment lies where the last one's did.
	script := `n=$1; [ "$n" -gt 0 ] && exec sh -c "$0" "$0" $((n - 1)); exec sleep 30`
	sh := exec.Command("sh", "-c", script, script, "3000")
	if setarch, err := exec.LookPath("setarch"); err == nil {
		sh = exec.Command(setarch, "-R", "sh", "-c", script, script, "3000")
	}
	sh.Env = append(os.Environ(), "SHELLGATE_TEST_MARK=across-exec")
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sh.Process.Kill(); sh.Wait() }()
	pid := sh.Process.Pid
	buf := make([]byte, 0, 16<<10)
	mark := []byte("SHELLGATE_TEST_MARK=across-exec\x00")
	reads, missed := 0, 0
	for {
		st, ok := readStat(pid)
		if !ok || st.dead() {
			t.Fatalf("the shell is gone after %d reads", reads)
		}
		env, err := readEnviron(pid, &buf)
		reads++
		if err == nil && !envHas(env, mark) {
			missed++
		}
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); bytes.HasPrefix(comm, []byte("sleep")) {
			break
		}
	}
	if missed > 0 {
		t.Errorf("the marker was missed in %d of %d reads while the process replaced itself", missed, reads)
	}
}

// An emptied environment (env -i) is told from an execve's instant by three
// looks a moment apart: what each read of such a process costs the marker
// scan. Compare with BenchmarkReadEnvironKept, a process that kept its own.
func BenchmarkReadEnvironEmptied(b *testing.B) {
	benchReadEnviron(b, exec.Command("env", "-i", "sleep", "30"))
}

func BenchmarkReadEnvironKept(b *testing.B) {
	benchReadEnviron(b, exec.Command("sleep", "30"))
}

func benchReadEnviron(b *testing.B, cmd *exec.Cmd) {
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pid := cmd.Process.Pid
	buf := make([]byte, 0, 16<<10)
	for { // until sleep's own image is in place
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); bytes.HasPrefix(comm, []byte("sleep")) {
			break
		}
	}
	b.ResetTimer()
	for range b.N {
		if _, err := readEnviron(pid, &buf); err != nil {
			b.Fatal(err)
		}
	}
}
