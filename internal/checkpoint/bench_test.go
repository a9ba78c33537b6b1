package checkpoint_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/checkpoint/checkpointtest"
	"github.com/shellgate/shellgate/internal/keeper"
)

// taker takes a command's checkpoints: a Store, or a keeper's Client.
type taker interface {
	Snapshot(label, command, session string) (int, error)
	Finish(id int) (checkpoint.Summary, error)
}

// startKeeper starts this test binary as the keeper of o's store, waits for
// it to answer, and ends it when the benchmark does; it returns its pid.
func startKeeper(b *testing.B, o checkpoint.Options) int {
	b.Helper()
	if runtime.GOOS != "linux" {
		b.Skip("no keeper on", runtime.GOOS)
	}
	args, _ := json.Marshal(keeper.Args{Options: o, Idle: time.Hour})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), keeperEnv+"="+string(args))
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		c, err := keeper.Dial(o)
		if err == nil {
			c.Close()
			return cmd.Process.Pid
		}
		if time.Now().After(deadline) {
			b.Fatalf("the keeper does not answer: %v", err)
		}
	}
}

// benchTree makes a committed repository of n files (100 a directory, ~1 KB
// each, .git packed as after a gc) under /var/tmp.
func benchTree(b *testing.B, n int) string {
	b.Helper()
	root := filepath.Join(checkpointtest.LabDir(b), "project")
	fillTree(b, root, n, "file")
	checkpointtest.Sh(b, root, "git init -q && git add -A && git -c gc.auto=0 commit -qm base && git gc -q")
	if os.Getenv("SHELLGATE_BENCH_NESTED") == "1" {
		// a repository nested in the root, of a tenth as many files
		lib := filepath.Join(root, "vendor", "lib")
		fillTree(b, lib, n/10, "nested")
		checkpointtest.Sh(b, lib, "git init -q && git add -A && git -c gc.auto=0 -c user.name=t -c user.email=t@e commit -qm base && git gc -q")
	}
	// Past the window in which a checkpoint reads a file again whatever its
	// stat (a file changed this close to it may change again unseen): the
	// benchmarks measure a project whose files are not all brand new.
	time.Sleep(2500 * time.Millisecond)
	return root
}

// fillTree writes n files of ~1 KB in dir, 100 a directory.
func fillTree(b *testing.B, dir string, n int, word string) {
	body := make([]byte, 1000)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	for i := 0; i < n; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		copy(body, fmt.Sprintf("%s %d\n", word, i))
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.txt", i%100)), body, 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// plainGit is `git add -A && git write-tree` of root with an index and
// object store of its own (the baseline the checkpoints are measured
// against): the time it took.
func plainGit(b *testing.B, root, gitDir string) time.Duration {
	b.Helper()
	start := time.Now()
	for _, args := range [][]string{{"add", "-A"}, {"write-tree"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_DIR="+gitDir, "GIT_WORK_TREE="+root, "GIT_INDEX_FILE="+gitDir+"/index",
			"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return time.Since(start)
}

// BenchmarkFirstPack measures the command during which git first packs the
// store: in a new store of a 10 000-file project (whose first, cold
// checkpoint wrote ~10 000 loose objects), 62 commands that each change one
// file, then the 64th, when git packs. cmd64-ms is its wall time (both
// checkpoints and what changed), cmd65-ms the next one's, cmd-p50-ms the
// median of those before. A pack in the foreground makes the 64th wait.
func BenchmarkFirstPack(b *testing.B) {
	root := benchTree(b, 10000)
	lab := filepath.Dir(root)
	var c64, c65 time.Duration
	var before []time.Duration
	i := 0
	for b.Loop() {
		i++
		store := filepath.Join(lab, fmt.Sprintf("store-%d", i))
		s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: store})
		if err != nil {
			b.Fatal(err)
		}
		command := func(k int) time.Duration {
			start := time.Now()
			id, err := s.Snapshot("run", "bench", "")
			if err != nil {
				b.Fatal(err)
			}
			os.WriteFile(filepath.Join(root, "d000", "f000.txt"), fmt.Appendf(nil, "change %d %d\n", i, k), 0o644)
			if _, err := s.Finish(id); err != nil {
				b.Fatal(err)
			}
			return time.Since(start)
		}
		command(1) // cold
		for k := 2; k < 64; k++ {
			before = append(before, command(k))
		}
		c64 += command(64)
		c65 += command(65)
		s.Close()
		os.RemoveAll(store)
	}
	slices.Sort(before)
	b.ReportMetric(ms(c64)/float64(i), "cmd64-ms")
	b.ReportMetric(ms(c65)/float64(i), "cmd65-ms")
	b.ReportMetric(ms(before[len(before)/2]), "cmd-p50-ms")
}

// diffFiles is `git diff-files --quiet` of root (its own index, which
// writes nothing): the time it took.
func diffFiles(b *testing.B, root string) time.Duration {
	b.Helper()
	start := time.Now()
	cmd := exec.Command("git", "diff-files", "--quiet")
	cmd.Dir = root
	cmd.Run() // exit 1: the changed file
	return time.Since(start)
}

func initBare(b *testing.B, dir string) {
	b.Helper()
	if out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
		b.Fatalf("%v %s", err, out)
	}
}

// BenchmarkCheckpoint measures a checkpoint of a root of 1 000 and 10 000
// files against `git add -A && git write-tree` of the same tree, in the same
// run (alternating which goes first):
//
//   - cold: a new store, every file read and written to it;
//   - warm: a command that changes one file, in a process that took the
//     last checkpoint (a session, the MCP server): the checkpoint before it,
//     the change, the checkpoint after it and what changed — cmd-ms is that
//     whole cost (cmd-cpu-ms the CPU time it took, which the machine's other
//     work does not inflate); checkpoint-ms the one after, against git's;
//     floor-ms is the wall time of spinning on one core for the CPU time
//     each command took, right after it: what the machine makes of that
//     much CPU at its present load, with no I/O or lock to wait for
//     (cmd-p50-ms and floor-p50-ms, their medians, are not moved by the
//     odd stall of a shared machine);
//   - warm-new-process: the same command in a new process (`shellgate run`):
//     the store opened afresh, its cache read from its file, the root walked.
//     cmd-ratio is its cmd-ms against git-ms; stat-floor-ms is `git
//     diff-files` of the root, in turn with it: git's own index check, which
//     stats every tracked file and reads none, the least a process that
//     knows nothing of what changed since the last one pays.
//   - warm-keeper (Linux): the same command in a new process that asks the
//     root's keeper (package keeper: another process, this test binary,
//     holding the store and its watch) for both checkpoints over a new
//     connection, as `shellgate run` does; keeper-cpu-ms is the keeper's CPU
//     time a command, cmd-cpu-ms the asking process's. Paired with git and
//     git diff-files as warm-new-process is.
//
// SHELLGATE_BENCH_100K=1 adds a root of 100 000 files.
// SHELLGATE_BENCH_NESTED=1 puts a repository of a tenth as many files
// (committed, packed) at vendor/lib of each root; the command still
// changes a file of the root's own.
func BenchmarkCheckpoint(b *testing.B) {
	sizes := []int{1000, 10000}
	if os.Getenv("SHELLGATE_BENCH_100K") == "1" {
		sizes = append(sizes, 100000)
	}
	for _, n := range sizes {
		root := benchTree(b, n)
		lab := filepath.Dir(root)
		b.Run(fmt.Sprintf("files=%d/cold", n), func(b *testing.B) {
			var ours, git time.Duration
			i := 0
			for b.Loop() {
				i++
				store := filepath.Join(lab, fmt.Sprintf("cold-store-%d", i))
				plain := filepath.Join(lab, fmt.Sprintf("cold-git-%d", i))
				initBare(b, plain)
				// Alternating which goes first: the one after pays for the
				// first one's objects being written back to the disk.
				if i%2 == 0 {
					git += plainGit(b, root, plain)
				}
				start := time.Now()
				s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: store})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.Snapshot("run", "bench", ""); err != nil {
					b.Fatal(err)
				}
				ours += time.Since(start)
				if i%2 == 1 {
					git += plainGit(b, root, plain)
				}
				os.RemoveAll(store)
				os.RemoveAll(plain)
			}
			report(b, ours, git, i)
		})
		for _, name := range []string{"warm", "warm-new-process", "warm-keeper"} {
			fresh, kept := name == "warm-new-process", name == "warm-keeper"
			b.Run(fmt.Sprintf("files=%d/%s", n, name), func(b *testing.B) {
				dir := filepath.Join(lab, name+"-store")
				var s taker
				s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: dir})
				if err != nil {
					b.Fatal(err)
				}
				var keeperPID int
				if kept {
					s.(*checkpoint.Store).Close()
					keeperPID = startKeeper(b, checkpoint.Options{Root: root, Dir: dir})
				}
				plain := filepath.Join(lab, name+"-git")
				initBare(b, plain)
				if _, err := s.Snapshot("run", "bench", ""); err != nil {
					b.Fatal(err)
				}
				plainGit(b, root, plain)
				if kept { // its first walk, the cold one, done before the count
					c, err := keeper.Dial(checkpoint.Options{Root: root, Dir: dir})
					if err != nil {
						b.Fatal(err)
					}
					if _, err := c.Snapshot("run", "bench", ""); err != nil {
						b.Fatal(err)
					}
					c.Close()
				}
				keeperCPU := procCPU(keeperPID)
				var ours, cmd, cpu, git, floor, statFloor time.Duration
				var cmds, floors []time.Duration
				i := 0
				for b.Loop() {
					i++
					// A command that changes one file: its checkpoint before,
					// the change, the checkpoint after.
					start, startCPU := time.Now(), cpuTime()
					switch {
					case fresh:
						if s, err = checkpoint.Open(checkpoint.Options{Root: root, Dir: dir}); err != nil {
							b.Fatal(err)
						}
					case kept:
						c, err := keeper.Dial(checkpoint.Options{Root: root, Dir: dir})
						if err != nil {
							b.Fatal(err)
						}
						s = c
					}
					id, err := s.Snapshot("run", "bench", "")
					if err != nil {
						b.Fatal(err)
					}
					before, beforeCPU := time.Since(start), cpuTime()-startCPU
					os.WriteFile(filepath.Join(root, "d000", "f000.txt"), fmt.Appendf(nil, "change %d\n", i), 0o644)
					if i%2 == 0 { // alternating which goes first, as above
						git += plainGit(b, root, plain)
					}
					start, startCPU = time.Now(), cpuTime()
					sum, err := s.Finish(id)
					if err != nil {
						b.Fatal(err)
					}
					after := time.Since(start)
					cmdCPU := beforeCPU + cpuTime() - startCPU
					cpu += cmdCPU
					f := spin(cmdCPU)
					floor += f
					floors = append(floors, f)
					cmds = append(cmds, before+after)
					if sum.Modified != 1 {
						b.Fatalf("the command changed one file; the checkpoints say %+v", sum)
					}
					ours += after // one checkpoint of a root with one file changed
					cmd += before + after
					if i%2 == 1 {
						git += plainGit(b, root, plain)
					}
					if c, ok := s.(*keeper.Client); ok {
						c.Close()
					}
					if fresh || kept {
						statFloor += diffFiles(b, root)
					}
				}
				report(b, ours, git, i)
				if kept {
					b.ReportMetric(ms(procCPU(keeperPID)-keeperCPU)/float64(i), "keeper-cpu-ms")
				}
				if fresh || kept {
					b.ReportMetric(float64(cmd)/float64(git), "cmd-ratio")
					b.ReportMetric(ms(statFloor)/float64(i), "stat-floor-ms")
				}
				b.ReportMetric(float64(cmd.Microseconds())/1000/float64(i), "cmd-ms")
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(i), "cmd-cpu-ms")
				b.ReportMetric(ms(median(cmds)), "cmd-p50-ms")
				b.ReportMetric(ms(slices.Max(cmds)), "cmd-max-ms")
				if floor > 0 {
					b.ReportMetric(float64(floor.Microseconds())/1000/float64(i), "floor-ms")
					b.ReportMetric(ms(median(floors)), "floor-p50-ms")
				}
			})
		}
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

var spinSink int

// spin keeps one core busy until this process has used cpu more CPU time,
// and returns the wall time that took (0 where there is no CPU clock).
func spin(cpu time.Duration) time.Duration {
	start, startCPU := time.Now(), cpuTime()
	if startCPU == 0 {
		return 0
	}
	x := 0
	for cpuTime()-startCPU < cpu {
		for j := range 20000 {
			x += j
		}
	}
	spinSink = x
	return time.Since(start)
}

func report(b *testing.B, ours, git time.Duration, n int) {
	b.ReportMetric(float64(ours.Microseconds())/1000/float64(n), "checkpoint-ms")
	b.ReportMetric(float64(git.Microseconds())/1000/float64(n), "git-ms")
	b.ReportMetric(float64(ours)/float64(git), "ratio")
}

// BenchmarkStoreGrowth runs 1 000 small commands (each changes one small
// file of a 1 000-file root, with its checkpoints before and after) and
// reports how much the store grew, packs included.
func BenchmarkStoreGrowth(b *testing.B) {
	root := benchTree(b, 1000)
	lab := filepath.Dir(root)
	i := 0
	for b.Loop() {
		i++
		s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: filepath.Join(lab, fmt.Sprintf("growth-%d", i))})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Snapshot("run", "first", ""); err != nil {
			b.Fatal(err)
		}
		first, err := s.Size()
		if err != nil {
			b.Fatal(err)
		}
		const commands = 1000
		for c := 0; c < commands; c++ {
			id, err := s.Snapshot("run", "edit", "")
			if err != nil {
				b.Fatal(err)
			}
			p := filepath.Join(root, fmt.Sprintf("d%03d", c%10), fmt.Sprintf("f%03d.txt", c%100))
			os.WriteFile(p, fmt.Appendf(nil, "line %d\nsecond line of a small edit\n", c), 0o644)
			if _, err := s.Finish(id); err != nil {
				b.Fatal(err)
			}
		}
		s.Close() // stops a pack still running: the size is what it left
		last, err := s.Size()
		if err != nil {
			b.Fatal(err)
		}
		if out, err := exec.Command("git", "--git-dir", filepath.Join(s.Dir(), "git"), "gc", "-q").CombinedOutput(); err != nil {
			b.Fatalf("gc: %v %s", err, out)
		}
		packed, err := s.Size()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(packed)/1024, "after-gc-KiB")
		b.ReportMetric(float64(first)/1024, "first-KiB")
		b.ReportMetric(float64(last-first)/commands, "B/command")
		b.ReportMetric(float64(last)/1024, "after-1000-KiB")
	}
}
