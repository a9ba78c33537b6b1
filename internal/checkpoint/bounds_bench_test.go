package checkpoint_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/checkpoint"
)

// BenchmarkFullStore measures commands in a store at MaxCount (1 000), where
// the count bound drops a 32nd of the records every ~31 commands: a root of
// 1 000 files, 1 000 commands taken first (not counted; every third deletes
// a file a command made, every fifth one the root had), then 256 that each
// change one file, in-process (a session). cmd-ms is their mean wall time
// (both checkpoints and what changed), cmd-p50-ms the median, cmd-max-ms
// the slowest; cmd1001-ms is the first past MaxCount, whose prune decides
// for the records not yet decided whether their command destroyed work
// (one git diff-tree of them all).
func BenchmarkFullStore(b *testing.B) {
	root := benchTree(b, 1000)
	lab := filepath.Dir(root)
	var cmds []time.Duration
	var first time.Duration
	i := 0
	for b.Loop() {
		i++
		s, err := checkpoint.Open(checkpoint.Options{Root: root, Dir: filepath.Join(lab, fmt.Sprintf("store-%d", i))})
		if err != nil {
			b.Fatal(err)
		}
		command := func(k int) time.Duration {
			start := time.Now()
			id, err := s.Snapshot("run", "bench", "")
			if err != nil {
				b.Fatal(err)
			}
			switch {
			case k%5 == 0 && k < 1000:
				os.Remove(filepath.Join(root, fmt.Sprintf("d%03d", k/100), fmt.Sprintf("f%03d.txt", k%100)))
			case k%3 == 0:
				os.Remove(filepath.Join(root, fmt.Sprintf("out-%d.txt", k-1)))
			default:
				os.WriteFile(filepath.Join(root, fmt.Sprintf("out-%d.txt", k)), []byte("out\n"), 0o644)
				os.WriteFile(filepath.Join(root, "d000", "f001.txt"), fmt.Appendf(nil, "change %d %d\n", i, k), 0o644)
			}
			if _, err := s.Finish(id); err != nil {
				b.Fatal(err)
			}
			return time.Since(start)
		}
		b.StopTimer()
		for k := 1; k <= 1000; k++ {
			command(k)
		}
		b.StartTimer()
		for k := 1001; k <= 1256; k++ {
			d := command(k)
			if k == 1001 {
				first += d
			}
			cmds = append(cmds, d)
		}
		s.Close()
	}
	var sum time.Duration
	for _, d := range cmds {
		sum += d
	}
	slices.Sort(cmds)
	b.ReportMetric(ms(sum)/float64(len(cmds)), "cmd-ms")
	b.ReportMetric(ms(cmds[len(cmds)/2]), "cmd-p50-ms")
	b.ReportMetric(ms(cmds[len(cmds)-1]), "cmd-max-ms")
	b.ReportMetric(ms(cmds[len(cmds)*99/100]), "cmd-p99-ms")
	b.ReportMetric(ms(first)/float64(i), "cmd1001-ms")
}
