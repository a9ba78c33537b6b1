package confine

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/shellgate/shellgate/internal/fsrules"
	"github.com/shellgate/shellgate/internal/inherit"
	"github.com/shellgate/shellgate/internal/unixgate"
)

// The wrapper is this executable started with wrapperFlag as argv[1]: it
// confines its own thread as Config says, then executes the command, which
// inherits all of it. A sandbox session without namespaces (a container with
// Docker's default seccomp profile) starts every command through it. Any
// program that imports the package can therefore wrap without a separate
// binary.
const wrapperFlag = "--shellgate-sandbox-bare"

func init() {
	if len(os.Args) >= 5 && os.Args[1] == wrapperFlag && os.Args[4] == "--" {
		os.Exit(wrapperMain(os.Args[2], os.Args[3], os.Args[5:]))
	}
}

// Config is what the wrapper applies.
type Config struct {
	Writable []string // where the command may write (Landlock)
	Devices  []string // device nodes it may write to as well
	Limits   Rlimits
	// NoSupervisor says why no supervisor can keep host unix sockets out.
	NoSupervisor string
	// Probe: apply, write the Result as JSON on stdout and run nothing.
	Probe bool
	// Expect are the layers a probe applied: a command starts only under
	// every one of them, so that a report made from the probe stays true.
	Expect []string
}

// Result is what the wrapper applied: layer names and values, and what is
// missing, each entry naming its layer.
type Result struct {
	Layers  map[string]string
	Missing []string
}

// Argv is the command line that runs argv (none: exit 0) under cfg, handing
// it descriptors 3 to 3+files-1 (exec.Cmd's ExtraFiles) and no others.
func Argv(cfg Config, files int, argv ...string) ([]string, error) {
	arg, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return append([]string{"/proc/self/exe", wrapperFlag, string(arg), strconv.Itoa(files), "--"}, argv...), nil
}

func wrapperMain(config, files string, argv []string) int {
	runtime.LockOSThread() // the exec must come from the confined thread
	var cfg Config
	n, err := strconv.Atoi(files)
	if err == nil && n < 0 {
		err = fmt.Errorf("%d descriptors to hand", n)
	}
	if err == nil {
		err = json.Unmarshal([]byte(config), &cfg)
	}
	if err == nil {
		// Whatever else the process that started this one left open across
		// exec stays out of the command's reach.
		err = inherit.Stop(3 + n)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "shellgate sandbox:", err)
		return 126
	}
	r := apply(cfg)
	if cfg.Probe {
		if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
			return 1
		}
		return 0
	}
	for _, layer := range cfg.Expect {
		if r.Layers[layer] == "" {
			fmt.Fprintf(os.Stderr, "shellgate sandbox: not run: %s\n", strings.Join(r.Missing, "; "))
			return 126
		}
	}
	if len(argv) == 0 {
		return 0
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "shellgate sandbox:", err)
		return 127
	}
	err = syscall.Exec(path, argv, os.Environ())
	fmt.Fprintln(os.Stderr, "shellgate sandbox:", err)
	return 126
}

// apply confines the calling thread, and the process for the limits, and
// says what applied.
func apply(cfg Config) Result {
	r := Result{Layers: map[string]string{}}
	if err := cfg.Limits.Set(); err != nil {
		r.Missing = append(r.Missing, "limits: "+err.Error())
	}
	t := Thread{Ruleset: -1, NoSupervisor: cfg.NoSupervisor}
	var err error
	if t.Ruleset, t.ABI, err = fsrules.Build(cfg.Writable, cfg.Devices); err != nil {
		r.Missing = append(r.Missing, LayerFS+": "+err.Error())
	}
	a, err := Self(t)
	if t.Ruleset >= 0 {
		syscall.Close(t.Ruleset)
	}
	r.Missing = append(r.Missing, Flatten(err)...)
	if a.Landlock > 0 {
		r.Layers[LayerFS] = "landlock-v" + strconv.Itoa(a.Landlock)
	}
	if a.Seccomp {
		r.Layers[LayerSeccomp] = "filter"
	}
	if a.Unix != "" {
		r.Layers[unixgate.Layer] = a.Unix
	}
	return r
}

// Flatten lists the errors that err joins (errors.Join), one a line of a
// report, each naming its layer.
func Flatten(err error) []string {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range j.Unwrap() {
		out = append(out, Flatten(e)...)
	}
	return out
}
