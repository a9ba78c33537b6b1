// Package shellstate carries a session's shell state from one command to the
// next, as a terminal would: the directory and exported variables bash
// reports as it exits (Prologue, Report, Parse), and which of those
// variables the next commands inherit (Exports).
package shellstate

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shellgate/shellgate/internal/inherit"
	"mvdan.cc/sh/v3/syntax"
)

// A Report is the pipe a session command's shell reports its state on as
// it exits (see Prologue): its directory and, with exports, its exported
// variables. It is read as the shell writes, so a large report never blocks
// the shell's exit; whatever the command itself writes there is only data,
// checked before use.
type Report struct {
	r    *os.File
	mu   sync.Mutex
	buf  []byte
	done chan struct{}
}

// maxReport bounds a report: a directory and the exported variables.
const maxReport = 1 << 20

// NewReport returns a report and the pipe end to give the shell as fd 3.
func NewReport() (*Report, *os.File, error) {
	r, w, err := inherit.Pipe(false)
	if err != nil {
		return nil, nil, err
	}
	s := &Report{r: r, done: make(chan struct{})}
	go s.collect()
	return s, w, nil
}

func (s *Report) collect() {
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

// Take returns the report once the shell has exited: what is still in the
// pipe is read (background processes may hold it open, so not to its end).
func (s *Report) Take() []byte {
	s.r.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	<-s.done
	s.r.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf
}

// CloseAt keeps the pipe read (and its report dropped) until done: a job's
// shell writes there on exit, and a closed pipe would kill it with SIGPIPE.
func (s *Report) CloseAt(done <-chan struct{}) {
	go func() {
		<-done
		s.r.Close()
	}()
}

// Prologue makes bash report its state on exit on fd 3, moved out of the way to
// fd 87 so the command keeps fd 3 for itself: the directory, NUL, and with
// exports each exported NAME=value, NUL. A command that replaces the EXIT
// trap or execs another program reports nothing, and nothing changes.
func Prologue(exports bool) string {
	report := `builtin printf "%s\0" "$PWD"`
	if exports {
		report += `; for __sg_n in $(compgen -e); do builtin printf "%s=%s\0" "$__sg_n" "${!__sg_n}"; done`
	}
	return `exec 87>&3 3>&-; trap '{ ` + report + `; } >&87' EXIT; `
}

// Parse splits a report into the directory and the exported variables.
func Parse(b []byte) (dir string, vars map[string]string, ok bool) {
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

// carried reports whether a variable the shell exported goes to the next
// commands.
func carried(name string) bool {
	return !notCarried[name] && !strings.HasPrefix(name, "BASH_FUNC_") && !strings.HasPrefix(name, "SHELLGATE_")
}

// Exports are the variables carried from earlier commands to the next: a
// value, or nil for one unset. The zero value carries nothing; it is safe
// for concurrent use.
type Exports struct {
	mu sync.Mutex
	m  map[string]*string
}

// Carry records how a command's exported variables (vars, from its report)
// differ from the environment it was given (env), for the next commands.
func (e *Exports) Carry(env []string, vars map[string]string) {
	given := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			given[k] = v
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[string]*string{}
	}
	for k, v := range vars {
		if carried(k) && given[k] != v {
			e.m[k] = &v
		}
	}
	for k := range given {
		if _, still := vars[k]; !still && carried(k) {
			e.m[k] = nil // unset
		}
	}
}

// Apply applies the variables carried from earlier commands to env.
func (e *Exports) Apply(env []string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.m) == 0 {
		return env
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		_, carriedOver := e.m[k]
		return carriedOver
	})
	for k, v := range e.m {
		if v != nil {
			env = append(env, k+"="+*v)
		}
	}
	return env
}
