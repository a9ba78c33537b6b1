package sandbox

import (
	"maps"
	"sync"
	"testing"
)

// countingHost is a host that counts the questions asked of it.
type countingHost struct {
	Host
	mu    sync.Mutex
	asked map[string]int
}

func (h *countingHost) count(q string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked[q]++
}

func (h *countingHost) Lstat(path string) (Kind, string) {
	h.count("lstat " + path)
	return h.Host.Lstat(path)
}

func (h *countingHost) ReadFile(path string) ([]byte, bool) {
	h.count("read " + path)
	return h.Host.ReadFile(path)
}

// A session's start plans twice (SessionFacts, to find the directories
// others may not enter, then with them): the host is asked each question
// once, a secret in the home, a cache and a settings file included, and the
// second plan is the same as one made from scratch.
func TestSessionPlansAskTheHostOnce(t *testing.T) {
	spec := workstationSpec
	spec.Writable = []string{"/var/lib/private/proj"}
	entries := maps.Clone(workstation.entries)
	entries["/var/lib/private/proj"] = "dir"
	host := fakeHost{entries: entries, files: workstation.files}
	counted := &countingHost{Host: host, asked: map[string]int{}}
	f := sessionFacts(spec, Facts{Host: counted, AsOthers: []string{"/etc", "/var"}})
	steps := Plan(spec, f) // as planWithTrees does
	for _, q := range []string{"lstat /home/u/.ssh", "lstat /home/u/.npm", "read /home/u/.gitconfig", "read /home/u/.npmrc"} {
		if counted.asked[q] == 0 {
			t.Errorf("the plans never asked %q: %v", q, counted.asked)
		}
	}
	for q, n := range counted.asked {
		if n > 1 {
			t.Errorf("%q asked %d times", q, n)
		}
	}
	want := Plan(spec, Facts{Host: host, AsOthers: f.AsOthers, Closed: f.Closed})
	if len(steps) != len(want) {
		t.Fatalf("%d steps, %d from a plan of its own", len(steps), len(want))
	}
	for i := range want {
		if steps[i].Op != want[i].Op || steps[i].Path != want[i].Path || string(steps[i].Data) != string(want[i].Data) {
			t.Errorf("step %d: %v, a plan of its own %v", i, steps[i], want[i])
		}
	}
}
