package shellgate_test

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/internal/corpus"
)

// corpusRow is one line of testdata/corpus/attacks.tsv.
type corpusRow struct {
	category, command, stage, run string
}

func readAttacks(t *testing.T) []corpusRow {
	t.Helper()
	var rows []corpusRow
	for _, r := range corpus.Read(t, "attacks.tsv") {
		rows = append(rows, corpusRow{r.Fields["category"], r.Command(), r.Fields["stage"], r.Fields["run"]})
	}
	return rows
}

// needsLimits are the proc-stage rows whose defence is a process limit (pids, memory,
// file size) rather than the timeout and the process-group kill. Running them without
// those limits would harm the machine the tests run on.
var needsLimits = map[string]string{
	"forkbomb":      "needs a pids limit (sandbox)",
	"resource/mem":  "needs a memory limit (sandbox)",
	"resource/disk": "needs a file-size limit (sandbox)",
}

// The corpus's proc-stage attacks, executed: a command that never returns is killed by
// the timeout, and background processes — even ones that left the process group with
// setsid — do not outlive the Gate.
func TestCorpusProcStageLive(t *testing.T) {
	lane.Live(t)
	ran := 0
	for _, row := range readAttacks(t) {
		if row.stage != "proc" {
			continue
		}
		t.Run(row.category+"/"+row.command, func(t *testing.T) {
			if why, ok := needsLimits[row.category]; ok {
				t.Skip(why)
			}
			ran++
			l := newLab(t)
			tag := "SHELLGATE_TEST_TAG=" + strconv.FormatInt(time.Now().UnixNano(), 36)
			name, value, _ := strings.Cut(tag, "=")
			g, err := shellgate.New(shellgate.Config{Root: l.root, SpillDir: t.TempDir(), KillGrace: 500 * time.Millisecond,
				Env: map[string]string{name: value}})
			must(t, err)
			start := time.Now()
			env := run(t, g, shellgate.Request{Command: row.command, TimeoutMS: ms(1500)})
			// Not a speed check: a command that was not stopped runs for
			// minutes; a loaded machine adds seconds to the 1.5 s.
			if time.Since(start) > 30*time.Second {
				t.Errorf("took %s: the command was not stopped at its timeout", time.Since(start))
			}
			must(t, g.Close())
			for pid, cmd := range tagged(tag) {
				t.Errorf("pid %d (%s) outlived the command and the gate\n%s", pid, cmd, env.Text)
			}
		})
	}
	if ran == 0 {
		t.Fatal("no proc-stage row ran")
	}
}

// tagged lists live processes whose environment holds tag, by PID: descendants of
// one test's commands, whatever their process group or session.
func tagged(tag string) map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		environ, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if !slices.Contains(strings.Split(string(environ), "\x00"), tag) {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		out[pid] = strings.ReplaceAll(string(cmd), "\x00", " ")
	}
	return out
}
