package copyup

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// floorEnv makes the session's supervisor answer every call at once with
// ENOENT, and opens go on past the error.
const floorEnv = "COPYUP_FLOOR"

// opens opens path for writing n times, as `>>` does, and prints the time
// one took, in nanoseconds.
func opens(path, count string) int {
	n, _ := strconv.Atoi(count)
	start := time.Now()
	for range n {
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
		if err != nil {
			if os.Getenv(floorEnv) == "" {
				return 1
			}
			continue
		}
		unix.Close(fd)
	}
	os.Stdout.WriteString(strconv.FormatInt(time.Since(start).Nanoseconds()/int64(max(n, 1)), 10) + "\n")
	return 0
}

// BenchmarkWriteOpen times an open for writing, with O_APPEND as a shell's
// `>>`, of a file with one name, made by a process on a plain thread, on a
// guarded one, and on one whose supervisor answers at once without opening
// anything (floor: the kernel's round trip to a supervisor, which no
// handler can beat); ns/open is the figure. Opens for reading are not
// handed over.
func BenchmarkWriteOpen(b *testing.B) {
	dir, err := os.MkdirTemp("/var/tmp", "copyup-bench-")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "f")
	const per = 2000
	for _, name := range []string{"plain", "floor", "guarded"} {
		guarded := name != "plain"
		b.Run(name, func(b *testing.B) {
			var total float64
			for i := 0; i < b.N; i++ {
				var out []byte
				var err error
				if guarded {
					cmd := exec.Command(os.Args[0], "-test.run=^$", roleEnv+`=opener "$COPYUP_BIN" opener `+file+` `+strconv.Itoa(per))
					cmd.Env = append(os.Environ(), roleEnv+"=session", "COPYUP_BIN="+os.Args[0])
					if name == "floor" {
						cmd.Env = append(cmd.Env, floorEnv+"=1")
					}
					out, err = cmd.Output()
				} else {
					cmd := exec.Command(os.Args[0], "opener", file, strconv.Itoa(per))
					cmd.Env = append(os.Environ(), roleEnv+"=opener")
					out, err = cmd.Output()
				}
				if err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				ns, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
				if err != nil {
					b.Fatalf("%q: %v", out, err)
				}
				total += ns
			}
			b.ReportMetric(total/float64(b.N), "ns/open")
		})
	}
}

// creations makes count rounds of names in dir, as an unpacker or a
// checkout does: a directory, a new file in it (O_CREAT|O_EXCL, written),
// renamed to its final name; and prints the time one round took, in
// nanoseconds.
func creations(dir, count string) int {
	n, _ := strconv.Atoi(count)
	d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 1
	}
	start := time.Now()
	for i := range n {
		sub := "d" + strconv.Itoa(i)
		if unix.Mkdirat(d, sub, 0o777) != nil {
			return 1
		}
		fd, err := unix.Openat(d, sub+"/f.tmp", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o666)
		if err != nil {
			return 1
		}
		unix.Write(fd, []byte("x\n"))
		unix.Close(fd)
		if unix.Renameat(d, sub+"/f.tmp", d, sub+"/f") != nil {
			return 1
		}
	}
	os.Stdout.WriteString(strconv.FormatInt(time.Since(start).Nanoseconds()/int64(max(n, 1)), 10) + "\n")
	return 0
}

// BenchmarkCreations times a burst of names made (mkdir, an O_EXCL open
// written and closed, a rename: three supervised calls) by a process on a
// plain thread, the baseline, and on a guarded one whose supervisor judges
// creations (a stager set, as a sandboxed session has), in turn at each
// iteration: an ext4 without a journal slows every inode made for the
// inodes removed in the last seconds, by any process, and the pairs see
// the same. guarded/plain is the figure (the mean of each pair's ratio);
// the directory is COPYUP_BENCH_DIR's, else /var/tmp's.
func BenchmarkCreations(b *testing.B) {
	const per = 1000
	base := cmp.Or(os.Getenv("COPYUP_BENCH_DIR"), "/var/tmp")
	run := func(guarded bool) float64 {
		b.StopTimer()
		defer b.StartTimer()
		dir, err := os.MkdirTemp(base, "copyup-bench-")
		if err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dir)
		work := filepath.Join(dir, "w")
		os.Mkdir(work, 0o755)
		var cmd *exec.Cmd
		if guarded {
			cmd = exec.Command(os.Args[0], "-test.run=^$", roleEnv+`=creator "$COPYUP_BIN" creator `+work+` `+strconv.Itoa(per))
			cmd.Env = append(os.Environ(), roleEnv+"=session", "COPYUP_BIN="+os.Args[0], stagerEnv+"="+dir)
		} else {
			cmd = exec.Command(os.Args[0], "creator", work, strconv.Itoa(per))
			cmd.Env = append(os.Environ(), roleEnv+"=creator")
		}
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		ns, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		if err != nil {
			b.Fatalf("%q: %v", out, err)
		}
		return ns
	}
	var plain, guarded, ratio float64
	for i := 0; i < b.N; i++ {
		p, g := run(false), run(true)
		plain, guarded, ratio = plain+p, guarded+g, ratio+g/p
	}
	n := float64(b.N)
	b.ReportMetric(plain/n, "plain-ns/round")
	b.ReportMetric(guarded/n, "guarded-ns/round")
	b.ReportMetric(ratio/n, "guarded/plain")
	b.ReportMetric(0, "ns/op")
}
