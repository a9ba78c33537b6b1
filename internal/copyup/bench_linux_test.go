package copyup

import (
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
