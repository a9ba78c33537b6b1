package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

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
	// A process started with none (env -i) reads empty, once its image is in.
	sleep := exec.Command("env", "-i", "sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	for comm := []byte(nil); !bytes.HasPrefix(comm, []byte("sleep")); {
		comm, _ = os.ReadFile(fmt.Sprintf("/proc/%d/comm", sleep.Process.Pid))
	}
	if env, err := readEnviron(sleep.Process.Pid, &buf); err != nil || len(env) > 0 {
		t.Errorf("env -i: %v %.100q", err, env)
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

// A process that unmapped its own environment reads empty while stat says
// one is in place: readEnviron gives up on it rather than looking forever
// (a command could hang every later marker scan so).
func TestReadEnvironOfAnUnmappedEnvironment(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	const unmap = `import ctypes, mmap, sys, time
f = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
lo = int(f[47]) & ~(mmap.PAGESIZE - 1)
hi = (int(f[48]) + mmap.PAGESIZE - 1) & ~(mmap.PAGESIZE - 1)
libc = ctypes.CDLL(None)
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
print(libc.munmap(lo, hi - lo), flush=True)
time.sleep(30)`
	py := exec.Command("python3", "-c", unmap)
	out, err := py.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := py.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { py.Process.Kill(); py.Wait() }()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "0\n" {
		t.Skipf("munmap of the environment: %q", line)
	}
	done := make(chan []byte, 1)
	go func() {
		buf := make([]byte, 0, 64)
		env, _ := readEnviron(py.Process.Pid, &buf)
		done <- env
	}()
	select {
	case env := <-done:
		if len(env) > 0 {
			t.Errorf("read %q from an unmapped environment", env)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("readEnviron still looking after 10 s")
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
