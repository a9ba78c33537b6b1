package envelope

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// strings returns every string value in a JSON document.
func jsonStrings(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	json.Unmarshal(b, &doc)
	var out []string
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			for _, v := range x {
				walk(v)
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	walk(doc)
	return out
}

// briefCases are the envelopes a model most often reads.
func briefCases() map[string]Envelope {
	path := "/tmp/shellgate-spill-0/abc.stdout.log"
	big := strings.Repeat("compiling module number 1234\n", 1700)
	policy := &PolicyInfo{Decision: "deny", Rule: "privilege", Reason: "`sudo` runs commands as root (rule privilege). Run it without sudo."}
	cases := map[string]Envelope{
		"echo hi": {Data: Data{Command: "echo hi", ExitCode: intp(0), Stdout: "hi\n"}, Stats: Stats{TimeMS: 3, StdoutBytes: 3},
			Context: Context{ParamsInput: map[string]any{"command": "echo hi"}, Shell: "/usr/bin/bash", Policy: &PolicyInfo{Decision: "allow"}, TimeoutMS: 120000}},
		"deny": {Data: Data{Command: "sudo apt-get install -y something-long"},
			Context: Context{ParamsInput: map[string]any{"command": "sudo apt-get install -y something-long"}, Shell: "/usr/bin/bash", Policy: policy},
			Error:   &Err{Code: PolicyDenied, Rule: "privilege", Message: policy.Reason}},
		"timeout": {Data: Data{Command: "sleep 10 && echo finished", TimedOut: true, Signal: strp("SIGTERM")}, Stats: Stats{TimeMS: 1004},
			Context: Context{ParamsInput: map[string]any{"command": "sleep 10 && echo finished", "timeout_ms": 1000}, Shell: "/usr/bin/bash", TimeoutMS: 1000}},
		"truncated": {Data: Data{Command: "make all", ExitCode: intp(2), Stdout: big, Truncated: true, FullOutputPath: &path, BackgroundPIDs: []int{4242}},
			Stats: Stats{TimeMS: 5000, StdoutBytes: 5 << 20}, Context: Context{ParamsInput: map[string]any{"command": "make all"}, Shell: "/usr/bin/bash", TimeoutMS: 120000}},
		"job list": {Data: Data{Jobs: []Job{{ID: "j1", State: JobRunning, Command: "python3 -u -m http.server 8000", RuntimeMS: 385, StdoutBytes: 65}}}},
	}
	for k, e := range cases {
		if e.Error != nil {
			e.Refuse(*e.Error)
		} else {
			e.Settle()
		}
		cases[k] = e
	}
	return cases
}

// No piece of text (past a few words) appears twice in a Brief: the output lives in
// data, the reason in error.message, the command in data.command.
func TestBriefSaysEachThingOnce(t *testing.T) {
	for name, e := range briefCases() {
		t.Run(name, func(t *testing.T) {
			strs := jsonStrings(t, e.Brief())
			for i, a := range strs {
				for j, b := range strs {
					if i != j && len(a) >= 16 && strings.Contains(b, a) {
						t.Errorf("%q appears again in %.120q", a, b)
					}
				}
			}
		})
	}
}

// Status and the error come first in both encodings.
func TestKeyOrder(t *testing.T) {
	e := briefCases()["deny"]
	for _, v := range []any{e, e.Brief()} {
		b, _ := json.Marshal(v)
		if !strings.HasPrefix(string(b), `{"status":"error","error":{"code":"POLICY_DENIED","rule":"privilege","message":`) {
			t.Errorf("%.120s", b)
		}
	}
}

func TestBriefText(t *testing.T) {
	c := briefCases()
	for name, want := range map[string]string{
		"echo hi":   "Command succeeded.\n(Exit code 0. Took 3ms)",
		"deny":      "Command not run.",
		"timeout":   "Timed out after 1s.\n(Killed by SIGTERM. Took 1004ms)",
		"truncated": "Command failed.\n(Exit code 2. Took 5000ms)\n[Truncated to its head and tail: read the rest from the full output file (grep, sed -n, tail), do not rerun.]\n[Their later output is dropped: redirect it to a file, or use run_in_background.]",
	} {
		e := c[name]
		if got := e.Brief().Text; got != want {
			t.Errorf("%s: brief text\n%s\nwant\n%s", name, got, want)
		}
	}
}

// The brief names the sandbox only when a layer is missing: a complete one costs
// the model nothing on every call.
func TestBriefSandboxOnlyWhenMissing(t *testing.T) {
	for _, tc := range []struct {
		sandbox any
		shown   bool
	}{
		{map[string]any{"fs": "landlock-v7", "net": "netns"}, false},
		{map[string]any{"fs": "landlock-v7", "missing": []string{"net: no netns"}}, true},
		{"off", false},
	} {
		e := Envelope{Context: Context{Sandbox: tc.sandbox}}
		e.Settle()
		if got := e.Brief().Context.Sandbox != nil; got != tc.shown {
			t.Errorf("sandbox %v: in the brief %v, want %v", tc.sandbox, got, tc.shown)
		}
	}
}

// data.changed is in the brief when the command changed something or still runs,
// not for one that changed nothing (the full envelope keeps it).
func TestBriefChangedOnlyWhenSomething(t *testing.T) {
	for _, tc := range []struct {
		changed Changed
		shown   bool
	}{
		{Changed{Checkpoint: 7}, false},
		{Changed{Checkpoint: 7, Modified: 1, Paths: []string{"modified a.go"}}, true},
		{Changed{Checkpoint: 7, Git: 3}, true},
		{Changed{Checkpoint: 7, Pending: true}, true},
	} {
		c := tc.changed
		e := Envelope{Data: Data{Command: "go test ./...", ExitCode: intp(1), Changed: &c}}
		e.Settle()
		if got := e.Brief().Data.Changed != nil; got != tc.shown {
			t.Errorf("%+v: in the brief %v, want %v", tc.changed, got, tc.shown)
		}
		if e.Data.Changed == nil {
			t.Errorf("%+v: the envelope lost data.changed", tc.changed)
		}
	}
}

// A job's result says how it ended once, in data.exit_code or data.signal, not
// again in data.job; a job list keeps each job's own. The full envelope keeps
// both.
func TestBriefJobSaysItsEndOnce(t *testing.T) {
	exited := Envelope{Data: Data{Command: "make", ExitCode: intp(3), Stdout: "hi\n",
		Job: &Job{ID: "j1", State: JobExited, ExitCode: intp(3), RuntimeMS: 512, StdoutBytes: 3}}, Stats: Stats{TimeMS: 512, StdoutBytes: 3}}
	killed := Envelope{Data: Data{Command: "sleep 30", Signal: strp("SIGTERM"),
		Job: &Job{ID: "j1", State: JobKilled, Signal: "SIGTERM", RuntimeMS: 20}}, Stats: Stats{TimeMS: 20}}
	for name, tc := range map[string]struct {
		e    Envelope
		once string
	}{"exited": {exited, `"exit_code":`}, "killed": {killed, `"SIGTERM"`}} {
		tc.e.Settle()
		b, _ := json.Marshal(tc.e.Brief())
		if n := strings.Count(string(b), tc.once); n != 1 {
			t.Errorf("%s: %s %d times in the brief:\n%s", name, tc.once, n, b)
		}
		if full, _ := json.Marshal(tc.e); strings.Count(string(full), tc.once) != 2 {
			t.Errorf("%s: the full envelope lost data.job's: %s", name, full)
		}
		if tc.e.Data.Job.ExitCode == nil && tc.e.Data.Job.Signal == "" {
			t.Errorf("%s: Brief changed the envelope's job", name)
		}
	}
	list := Envelope{Data: Data{Jobs: []Job{{ID: "j1", State: JobExited, ExitCode: intp(3)}}}}
	list.Settle()
	if b, _ := json.Marshal(list.Brief()); strings.Count(string(b), `"exit_code":3`) != 1 {
		t.Errorf("a job list lost a job's exit code: %s", b)
	}
}

// A call's job does not repeat its runtime and byte counts, which stats has:
// data.job is its id and state. A list's jobs keep theirs (stats is the
// call's), their zero values left out as every other field of a Brief is.
func TestBriefJobSaysItsStatsOnce(t *testing.T) {
	e := Envelope{Data: Data{Command: "npm run dev", Stdout: "ready\n",
		Job: &Job{ID: "j1", State: JobRunning, RuntimeMS: 512, StdoutBytes: 6}}, Stats: Stats{TimeMS: 512, StdoutBytes: 6}}
	e.Settle()
	b, _ := json.Marshal(e.Brief())
	if !strings.Contains(string(b), `"job":{"id":"j1","state":"running"}`) || strings.Contains(string(b), `"runtime_ms"`) {
		t.Errorf("the call's job repeats its stats:\n%s", b)
	}
	if e.Data.Job.RuntimeMS != 512 {
		t.Errorf("Brief changed the envelope's job: %+v", e.Data.Job)
	}
	list := Envelope{Data: Data{Jobs: []Job{{ID: "j1", State: JobRunning, Command: "sleep 30", RuntimeMS: 40}, {ID: "j2", State: JobExited, Command: "make", RuntimeMS: 7, StdoutBytes: 3}}}}
	list.Settle()
	b, _ = json.Marshal(list.Brief())
	if !strings.Contains(string(b), `{"id":"j1","state":"running","command":"sleep 30","runtime_ms":40}`) || !strings.Contains(string(b), `"runtime_ms":7,"stdout_bytes":3}`) {
		t.Errorf("a job list's jobs: %s", b)
	}
}

// Every field of Data is in BriefData under the same JSON name, so that the
// Brief, which copies them one by one, loses none: each set to a value of its
// own is in the Brief's JSON.
func TestBriefDataHasEveryField(t *testing.T) {
	var d Data
	v := reflect.ValueOf(&d).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		default:
			t.Fatalf("Data.%s: a %s, which this test does not fill", v.Type().Field(i).Name, f.Kind())
		}
	}
	d.Job.RuntimeMS = 1 // not the call's stats: kept
	d.Changed.Added = 1 // a change that changed nothing is left out
	d.Job.ID, d.Jobs[0].ID = "j1", "j2"
	e := Envelope{Data: d}
	var got map[string]any
	b, _ := json.Marshal(e.Brief().Data)
	json.Unmarshal(b, &got)
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if _, ok := got[name]; !ok {
			t.Errorf("data.%s is not in the Brief: %s", name, b)
		}
	}
}

// A Brief for a reader who knows the shell and the default timeout (an MCP
// tool's description names them) leaves them out of context, and keeps a
// timeout or a shell that is not those.
func TestBriefLeavesOutWhatTheReaderKnows(t *testing.T) {
	known := Known{Shell: "/usr/bin/bash", TimeoutMS: 120000}
	e := briefCases()["echo hi"]
	if c := e.BriefKnowing(known).Context; c.Shell != "" || c.TimeoutMS != 0 {
		t.Errorf("the known shell and default timeout are in the brief: %+v", c)
	}
	if c := e.Brief().Context; c.Shell != "/usr/bin/bash" || c.TimeoutMS != 120000 {
		t.Errorf("Brief without Known lost them: %+v", c)
	}
	e.Context.Shell, e.Context.TimeoutMS = "/bin/sh", 90000
	if c := e.BriefKnowing(known).Context; c.Shell != "/bin/sh" || c.TimeoutMS != 90000 {
		t.Errorf("a shell and a timeout the reader does not know are left out: %+v", c)
	}
}

// A Brief has stats only where something ran: a refusal's, a job list's and
// an answer's were all zero.
func TestBriefStatsOnlyWhereSomethingRan(t *testing.T) {
	cases := briefCases()
	cases["answer"] = Answer("1  12:00:00  rm f: deleted f", nil)
	for name, want := range map[string]bool{"echo hi": true, "timeout": true, "truncated": true, "deny": false, "job list": false, "answer": false} {
		t.Run(name, func(t *testing.T) {
			e := cases[name]
			b, err := json.Marshal(e.Brief())
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(string(b), `"stats":`); got != want {
				t.Errorf("stats in the brief: %v, want %v:\n%.400s", got, want, b)
			}
		})
	}
}
