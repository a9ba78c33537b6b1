package shellgate

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// A stateReport is the pipe a session command's shell reports its state on as
// it exits (see prologue): its directory and, with KeepExports, its exported
// variables. It is read as the shell writes, so a large report never blocks
// the shell's exit; whatever the command itself writes there is only data,
// checked before use.
type stateReport struct {
	r    *os.File
	mu   sync.Mutex
	buf  []byte
	done chan struct{}
}

// maxReport bounds a report: a directory and the exported variables.
const maxReport = 1 << 20

// newStateReport returns a report and the pipe end to give the shell as fd 3.
func newStateReport() (*stateReport, *os.File, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	s := &stateReport{r: r, done: make(chan struct{})}
	go s.collect()
	return s, w, nil
}

func (s *stateReport) collect() {
	defer close(s.done)
	b := make([]byte, 32<<10)
	for {
		n, err := s.r.Read(b)
		s.mu.Lock()
		if room := maxReport - len(s.buf); room > 0 {
			s.buf = append(s.buf, b[:min(n, room)]...)
		}
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// take returns the report once the shell has exited: what is still in the
// pipe is read (background processes may hold it open, so not to its end).
func (s *stateReport) take() []byte {
	s.r.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	<-s.done
	s.r.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf
}

// closeAt keeps the pipe read (and its report dropped) until done: a job's
// shell writes there on exit, and a closed pipe would kill it with SIGPIPE.
func (s *stateReport) closeAt(done <-chan struct{}) {
	go func() {
		<-done
		s.r.Close()
	}()
}

// prologue makes bash report its state on exit on fd 3, moved out of the way to
// fd 87 so the command keeps fd 3 for itself: the directory, NUL, and with
// exports each exported NAME=value, NUL. A command that replaces the EXIT
// trap or execs another program reports nothing, and nothing changes.
func prologue(exports bool) string {
	report := `builtin printf "%s\0" "$PWD"`
	if exports {
		report += `; for __sg_n in $(compgen -e); do builtin printf "%s=%s\0" "$__sg_n" "${!__sg_n}"; done`
	}
	return `exec 87>&3 3>&-; trap '{ ` + report + `; } >&87' EXIT; `
}

// parseReport splits a report into the directory and the exported variables.
func parseReport(b []byte) (dir string, vars map[string]string, ok bool) {
	parts := bytes.Split(b, []byte{0})
	if len(parts) < 2 { // no NUL after the directory: no (whole) report
		return "", nil, false
	}
	vars = map[string]string{}
	for _, p := range parts[1 : len(parts)-1] {
		name, value, found := strings.Cut(string(p), "=")
		if found && syntax.ValidName(name) {
			vars[name] = value
		}
	}
	return string(parts[0]), vars, true
}

// notCarried are variables never carried to the next command: the shell's
// own, shellgate's, and those that make every later command run code or
// change how programs load (an export of them was judged when it ran; a
// later command should not inherit it silently).
var notCarried = map[string]bool{
	"PWD": true, "OLDPWD": true, "SHLVL": true, "_": true, "BASH_ENV": true, "ENV": true,
	"SHELLOPTS": true, "BASHOPTS": true, "PROMPT_COMMAND": true, "PS4": true, "IFS": true,
	"CDPATH": true, "GLOBIGNORE": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true,
	"TMPDIR": true, "TMP": true, "TEMP": true, "HOME": true,
}

func carried(name string) bool {
	return !notCarried[name] && !strings.HasPrefix(name, "BASH_FUNC_") && !strings.HasPrefix(name, "SHELLGATE_")
}

// carryExports records how the command's exported variables differ from the
// environment it was given (env), for the next commands.
func (s *Session) carryExports(env []string, vars map[string]string) {
	given := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			given[k] = v
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exports == nil {
		s.exports = map[string]*string{}
	}
	for k, v := range vars {
		if carried(k) && given[k] != v {
			s.exports[k] = &v
		}
	}
	for k := range given {
		if _, still := vars[k]; !still && carried(k) {
			s.exports[k] = nil // unset
		}
	}
}

// withExports applies the variables carried from earlier commands to env.
func (s *Session) withExports(env []string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.exports) == 0 {
		return env
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, carriedOver := s.exports[k]
		return carriedOver
	})
	for k, v := range s.exports {
		if v != nil {
			env = append(env, k+"="+*v)
		}
	}
	return env
}
