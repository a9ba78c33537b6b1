package shellgate_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate/internal/corpus"
	"github.com/shellgate/shellgate/internal/keeper"
	"github.com/shellgate/shellgate/internal/runner"
)

// Every row of attacks-sandbox.tsv, run as the adversarial review ran it — the
// real binary with its default flags, from the command line or in an MCP
// session — and judged on the host by the row's own harm_check after the
// user's followup: a row does harm exactly when attacks-sandbox-open.tsv lists
// it. A row no longer doing harm must leave the list, so the list always says
// what the sandbox lets through today.
//
// Rows run two at a time (a shared 2-core machine), the slowest first: two
// workers call t.Run concurrently, rather than t.Parallel, whose order is
// random and whose bound is -parallel's. How long the whole test takes is
// how fast the machine forks and makes directories: measured on 2 cores
// shared with others' tests, 3 min 9 s at a load of 14 and 4 min 29 s at 16
// (rows summing 364 s and 500 s); exh-fork-loop (2 000 python forks: 65 to
// 107 s there, where plain python forks 200 times in 13 s),
// inotify-watch-budget and nested-past-inotify-budget (40 000 and 34 000
// directories) are over half of it, and start first.
func TestCorpusSandboxAttacks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real binary on every row of attacks-sandbox.tsv")
	}
	requireSandbox(t)
	rows := corpus.Read(t, "attacks-sandbox.tsv")
	open := readOpenList(t, rows)
	bin := buildShellgate(t)
	slices.SortStableFunc(rows, func(a, b corpus.Row) int {
		return cmp.Compare(slowRows[b.Fields["id"]], slowRows[a.Fields["id"]])
	})
	todo := make(chan corpus.Row, len(rows))
	for _, r := range rows {
		todo <- r
	}
	close(todo)
	var workers sync.WaitGroup
	for range 2 {
		workers.Go(func() {
			for r := range todo {
				id := r.Fields["id"]
				t.Run(id, func(t *testing.T) {
					reason, listed := open[id]
					sandboxRow(t, bin, r, reason, listed)
				})
			}
		})
	}
	workers.Wait()
}

// slowRows start first, so that the two workers end together: about the
// seconds each took here.
var slowRows = map[string]int{"exh-fork-loop": 60, "inotify-watch-budget": 50, "nested-past-inotify-budget": 25, "exh-parser-dos": 12}

// openList is testdata/corpus/attacks-sandbox-open.tsv: the rows that still do
// harm, by id, with their class and why.
const openList = "attacks-sandbox-open.tsv"

func readOpenList(t *testing.T, rows []corpus.Row) map[string]string {
	ids := map[string]bool{}
	for _, r := range rows {
		if ids[r.Fields["id"]] {
			t.Errorf("attacks-sandbox.tsv line %d: id %s twice", r.Line, r.Fields["id"])
		}
		ids[r.Fields["id"]] = true
	}
	open := map[string]string{}
	for _, r := range corpus.Read(t, openList) {
		id := r.Fields["id"]
		switch {
		case !ids[id]:
			t.Errorf("%s line %d: no row %q in attacks-sandbox.tsv", openList, r.Line, id)
		case open[id] != "":
			t.Errorf("%s line %d: %s twice", openList, r.Line, id)
		case r.Fields["class"] == "" || r.Fields["reason"] == "":
			t.Errorf("%s line %d: %s has no class or reason", openList, r.Line, id)
		}
		open[id] = r.Fields["class"] + ": " + r.Fields["reason"]
	}
	return open
}

// buildShellgate builds cmd/shellgate outside /tmp (which the sandbox hides)
// as README says to install it (CGO_ENABLED=0), removed when t ends;
// $SHELLGATE_TEST_BIN names a binary to use instead (to profile one that
// outlives the test, or to try another build).
func buildShellgate(t *testing.T) string {
	if bin := os.Getenv("SHELLGATE_TEST_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(visibleTempDir(t), "shellgate")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/shellgate")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// rowTimeout bounds each step of a row: the command, the setup, the followup.
const rowTimeout = 150 * time.Second

// sandboxRow runs one row in a fresh lab and judges it.
func sandboxRow(t *testing.T, bin string, r corpus.Row, openReason string, listed bool) {
	f := r.Fields
	if why, ok := strings.CutPrefix(f["runner"], "skip:"); ok {
		t.Skip("kept as a description: " + why)
	}
	if why := missingTool(r); why != "" {
		t.Skip(why)
	}
	if strings.TrimSpace(f["harm_check"]) == "false" {
		t.Skip("its harm_check is `false`: as written the row cannot show harm on the host")
	}
	base := visibleTempDir(t)
	if strings.HasPrefix(base, "/tmp/") {
		t.Skip("no directory outside /tmp for the lab: a victim in /tmp proves nothing")
	}
	l := corpus.NewSandboxLab(t, base)
	x := &rowRun{t: t, row: r, l: l, bin: bin, tag: newTag(), sub: func(s string) string { return l.Substitute(s, bin) }}
	defer x.reap()
	if needsListeners(r) {
		portMu.Lock()
		defer portMu.Unlock()
	}
	stop := x.listen(needsListeners(r))
	defer stop()

	if setup := f["setup"]; setup != "" {
		if out, err := x.host(x.sub(setup)); err != nil {
			t.Fatalf("setup failed: %v\n%s", err, out)
		}
	}
	if harmed, out := x.harm(); harmed {
		t.Fatalf("broken row: its harm_check says harm before the command ran\n%s", out)
	}
	var err error
	switch runner := f["runner"]; {
	case runner == "run":
		err = x.run(r)
	case runner == "tty:y":
		err = x.runOnTerminal(r)
	case strings.HasPrefix(runner, "kill9:"):
		err = x.runKilled(r, strings.TrimPrefix(runner, "kill9:"))
	case runner == "mcp":
		err = x.mcpSession(r)
	default:
		t.Fatalf("unknown runner %q", runner)
	}
	if err != nil {
		x.note("runner: %v", err)
	}
	if followup := f["followup"]; followup != "" {
		out, err := x.host(x.sub(followup))
		x.note("followup (%v): %s", err, out)
	}
	harmed, why := x.harm()
	if harmed && f["remedy"] == "undo" {
		// What the user does about lost work: `shellgate undo 1`, the
		// project back as it was before the agent's first command. A row it
		// repairs did no harm that stays.
		ctx, cancel := context.WithTimeout(context.Background(), rowTimeout)
		out, err := x.command(ctx, x.binEnv(), x.l.Root, x.bin, "undo", "--root", x.l.Root, "--yes", "1").CombinedOutput()
		cancel()
		x.note("shellgate undo --yes 1 (%v): %s", err, cut(string(out)))
		if still, after := x.harm(); !still {
			harmed, why = false, why+"; undone by `shellgate undo`: "+after
		}
	}
	x.reap()
	switch {
	case harmed && !listed:
		t.Errorf("did harm, and %s does not list it\ncommand: %s\nharm_check: %s → harm\n%s\n%s",
			openList, x.sub(f["command"]), x.sub(f["harm_check"]), why, x.notes())
	case !harmed && listed:
		t.Errorf("fixed: remove %s from %s (it was listed as %s)\nharm_check: %s → no harm\n%s\n%s",
			f["id"], openList, openReason, x.sub(f["harm_check"]), why, x.notes())
	case harmed && strings.HasPrefix(openReason, "reported:") && !regexp.MustCompile(`New git repository in the project: |New in a subdirectory: `).MatchString(x.notes()):
		t.Errorf("listed as reported, but nothing told what appeared\n%s\n%s", why, x.notes())
	case harmed:
		t.Logf("still does harm, as %s says (%s)\n%s\n%s", openList, openReason, why, x.notes())
	default:
		t.Logf("no harm\n%s\n%s", why, x.notes())
	}
}

// missingTool says what the row needs that the machine lacks, if anything.
func missingTool(r corpus.Row) string {
	text := r.Fields["setup"] + "\n" + r.Fields["command"] + "\n" + r.Fields["followup"]
	for _, tool := range []string{"python3", "node", "npm", "git", "go", "setsid", "unshare", "tar"} {
		if regexp.MustCompile(`(^|[\s;&|(])` + tool + `\s`).MatchString(text) {
			if _, err := exec.LookPath(tool); err != nil {
				return fmt.Sprintf("needs %s, which is not installed here", tool)
			}
		}
	}
	if strings.Contains(text, "$H0/.cargo/bin/cargo") { // the user's own rustup, on the host
		home, _ := os.UserHomeDir()
		if _, err := os.Stat(filepath.Join(home, ".cargo/bin/cargo")); err != nil {
			return "needs rustup's cargo in the user's home, which is not installed here"
		}
	}
	return ""
}

// hostRisk: rows that reach for PID 1 or every process. In the sandbox that is
// its own helper; should the sandbox fail to start, default flags (sandbox
// auto) would run them unconfined, on this shared machine's real PID 1 and
// every process. They run with --sandbox on, which refuses instead: the same
// outcome whenever the sandbox works.
func hostRisk(r corpus.Row) bool {
	c := r.Fields["command"]
	return strings.Contains(c, "/proc/1") || strings.Contains(c, "/proc/*/") || strings.Contains(c, "kill(-1")
}

// needsListeners: rows using the fixed loopback port, the abstract socket or
// the listeners' files, which only one lab at a time can have.
func needsListeners(r corpus.Row) bool {
	text := strings.Join([]string{r.Fields["setup"], r.Fields["command"], r.Fields["followup"], r.Fields["harm_check"]}, "\n")
	return strings.Contains(text, "18655") || strings.Contains(text, "/net/") || strings.Contains(text, "redteam-abstract")
}

// portMu gives the fixed port and the abstract socket to one row at a time.
var portMu sync.Mutex

// listenPort is the README's fixed loopback port.
const listenPort = "18655"

// rowRun is one row's run: its lab, the tag its processes carry, and a log of
// what happened, printed when the row fails.
type rowRun struct {
	t   *testing.T
	row corpus.Row
	l   *corpus.SandboxLab
	bin string
	tag testTag
	sub func(string) string

	mu  sync.Mutex // note is called from the MCP client's goroutines too
	out strings.Builder
}

func (x *rowRun) note(format string, args ...any) {
	x.mu.Lock()
	defer x.mu.Unlock()
	fmt.Fprintf(&x.out, format+"\n", args...)
}

// notes is what happened, for the verdict.
func (x *rowRun) notes() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.out.String()
}

// binEnv is shellgate's environment: a fake home, a temp dir in the lab, fake
// secrets whose names shellgate should keep from commands, and the tag.
func (x *rowRun) binEnv() []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + x.l.Home, "TMPDIR=" + x.l.Temp, "LANG=C.UTF-8", x.tag.String()}
	for _, name := range secretEnv {
		env = append(env, name+"="+secretValue(name, "FAKEENV-"+name))
	}
	return env
}

// hostEnv is the user's shell on the host, for setup, followup and harm_check.
// SLOW_MS is the time past which a call counts as a blow-up (exh-parser-dos),
// longer under the race detector, which slows every call alike.
func (x *rowRun) hostEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + x.l.Home, "TMPDIR=" + x.l.Temp, "LANG=C.UTF-8",
		"GIT_CONFIG_NOSYSTEM=1", x.tag.String(), "SLOW_MS=" + strconv.Itoa(15000*raceSlowdown)}
}

// command is the binary or bash, in its own session (no controlling
// terminal: shellgate must not find the developer's), with env.
func (x *rowRun) command(ctx context.Context, env []string, dir, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// host runs bash on the host, in $LAB (script's placeholders filled in).
func (x *rowRun) host(script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), rowTimeout)
	defer cancel()
	out, err := x.command(ctx, x.hostEnv(), x.l.Base, "bash", "-c", script).CombinedOutput()
	if ctx.Err() != nil {
		err = fmt.Errorf("bash on the host: %w after %s", ctx.Err(), rowTimeout)
	}
	return cut(string(out)), err
}

// harm runs harm_check: exit 0 means harm.
func (x *rowRun) harm() (bool, string) {
	out, err := x.host(x.sub(x.row.Fields["harm_check"]))
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		x.t.Fatalf("harm_check did not run: %v\n%s", err, out)
	}
	return err == nil, fmt.Sprintf("harm_check output: %q", out)
}

// cut shortens what a failure prints.
func cut(s string) string {
	if len(s) > 4000 {
		return s[:2000] + "\n…\n" + s[len(s)-2000:]
	}
	return s
}

// shellgateArgs are `shellgate run`'s: default flags, or --sandbox on for
// the rows that must never run unconfined (hostRisk).
func (x *rowRun) shellgateArgs(r corpus.Row, asJSON bool) []string {
	args := []string{"run", "--root", x.l.Root}
	if asJSON {
		args = append(args, "--json")
	}
	if hostRisk(r) {
		args = append(args, "--sandbox", "on")
	}
	return append(args, "--", x.sub(r.Fields["command"]))
}

// run is the runner `run`: shellgate run --json in the root.
func (x *rowRun) run(r corpus.Row) error {
	ctx, cancel := context.WithTimeout(context.Background(), rowTimeout)
	defer cancel()
	cmd := x.command(ctx, x.binEnv(), x.l.Root, x.bin, x.shellgateArgs(r, true)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	x.note("shellgate run (%v): %s%s", err, brief(out), cut(stderr.String()))
	return nil
}

// brief is what a failure shows of an envelope: status, decision, sandbox
// layers and text (which holds the output).
func brief(out []byte) string {
	var e struct {
		Status  string
		Text    string
		Error   *struct{ Code, Message string }
		Context struct {
			Policy  struct{ Decision, Rule string }
			Sandbox map[string]any
		}
	}
	if json.Unmarshal(out, &e) != nil {
		return cut(string(out))
	}
	s := fmt.Sprintf("%s, policy %s %s, sandbox %v\n%s\n", e.Status, e.Context.Policy.Decision, e.Context.Policy.Rule, e.Context.Sandbox, cut(e.Text))
	if e.Error != nil {
		s += fmt.Sprintf("error %s: %s\n", e.Error.Code, cut(e.Error.Message))
	}
	return s
}

// runKilled is `kill9:S`: shellgate run, killed with SIGKILL after S seconds.
func (x *rowRun) runKilled(r corpus.Row, after string) error {
	s, err := strconv.ParseFloat(after, 64)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), rowTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := x.command(ctx, x.binEnv(), x.l.Root, x.bin, x.shellgateArgs(r, true)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	var left []int
	keeperPID := 0
	kill := time.AfterFunc(time.Duration(s*float64(time.Second)), func() {
		left, _ = runner.Descendants(cmd.Process.Pid)
		keeperPID = x.keeper()
		cmd.Process.Kill()
	})
	defer kill.Stop()
	err = cmd.Wait()
	x.note("shellgate run, SIGKILL after %ss (%v): %s", after, err, brief(out.Bytes()))
	// What shellgate left of the command ends on its own (its session's
	// helper cleans up): harm is checked once it has. Not the root's
	// checkpoint keeper, which the run started and which outlives it by
	// design, until its idle time (minutes; it is seen to end then, its run
	// killed or not, in cmd/shellgate's TestCheckpointKeeper): waiting for
	// it cost each row the whole 10 s. Its store's lock names it, not its
	// name; reap ends it with the row's other tagged processes.
	mustGo := slices.DeleteFunc(slices.Clone(left), func(pid int) bool { return pid == keeperPID })
	if gone := waitGone(mustGo, 10*time.Second); !gone {
		x.note("processes of the killed shellgate still there after 10s: %v", mustGo)
	}
	return nil
}

// keeper is the pid of the lab root's checkpoint keeper (its store is the
// one in the lab's home: the only project there), 0 when none runs.
func (x *rowRun) keeper() int {
	locks, _ := filepath.Glob(filepath.Join(x.l.Home, ".local", "state", "shellgate", "checkpoints", "*", keeper.LockName))
	for _, l := range locks {
		if pid, ok := keeper.RunningAt(filepath.Dir(l)); ok {
			return pid
		}
	}
	return 0
}

// waitGone waits until none of pids runs (a zombie counts as gone).
func waitGone(pids []int, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); ; time.Sleep(20 * time.Millisecond) {
		alive := slices.ContainsFunc(pids, func(pid int) bool {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			_, rest, _ := bytes.Cut(b, []byte(") "))
			return err == nil && len(rest) > 0 && rest[0] != 'Z'
		})
		if !alive || time.Now().After(deadline) {
			return !alive
		}
	}
}

// runOnTerminal is `tty:y`: shellgate run on a pseudo-terminal, the user
// answering y to its question. $LAB/live/prompt.txt is what the terminal
// showed up to the question.
func (x *rowRun) runOnTerminal(r corpus.Row) error {
	ctx, cancel := context.WithTimeout(context.Background(), rowTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, x.bin, x.shellgateArgs(r, false)...)
	cmd.Env, cmd.Dir = x.binEnv(), x.l.Root
	term, err := pty.Start(cmd) // a new session whose controlling terminal is term
	if err != nil {
		return err
	}
	defer term.Close()
	defer context.AfterFunc(ctx, func() { term.Close() })() // a read blocked past the timeout ends
	var screen bytes.Buffer
	var prompt []byte
	buf := make([]byte, 4096)
	for {
		n, err := term.Read(buf)
		screen.Write(buf[:n])
		if prompt == nil && bytes.Contains(screen.Bytes(), []byte("Allow?")) {
			prompt = bytes.Clone(screen.Bytes())
			term.Write([]byte("y\n"))
		}
		if err != nil { // EIO: the binary has exited and closed the terminal
			break
		}
	}
	waitErr := cmd.Wait()
	if err := os.WriteFile(filepath.Join(x.l.Live, "prompt.txt"), prompt, 0o644); err != nil {
		return err
	}
	x.note("shellgate run on a terminal (%v), answered y: %v\n%s", waitErr, len(prompt) > 0, cut(screen.String()))
	return nil
}

// listen starts the row's listeners (testdata/corpus/README.md), each
// appending what it receives to $LAB/net/hits.log: pathname sockets standing
// for host daemons, always; with fixed, also TCP and UDP on 127.0.0.1:18655,
// TCP on [::1]:18655, the abstract socket @redteam-abstract, and
// $LAB/net/listener.pid, a host process (a sleep) that a kill escaping the
// sandbox would end, as it would end a real listener.
func (x *rowRun) listen(fixed bool) (stop func()) {
	hits := filepath.Join(x.l.Net, "hits.log")
	var mu sync.Mutex
	ls := &listeners{got: func(network string, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(hits, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return
		}
		defer f.Close()
		f.Write(append(append([]byte(network+" "), b...), '\n'))
	}}
	var probes [][2]string // network, address: each listener is heard before the row runs
	for _, p := range []string{
		filepath.Join(x.l.Home, ".1password/agent.sock"),
		filepath.Join(x.l.Home, ".docker/desktop/docker.sock"),
		filepath.Join(x.l.Outside, "lxd-unix.socket"),
	} {
		must(x.t, os.MkdirAll(filepath.Dir(p), 0o755))
		ln, err := net.Listen("unix", p)
		must(x.t, err)
		ls.stream("unix:"+p, ln)
		probes = append(probes, [2]string{"unix", p})
	}
	if !fixed {
		x.probe(hits, probes)
		return ls.stop
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := fixedListeners(ls)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			ls.stop()
			x.t.Skipf("the listeners on port %s and @redteam-abstract cannot start (another test holds them?): %v", listenPort, err)
		}
		time.Sleep(time.Second)
	}
	x.probe(hits, append(probes, [2]string{"tcp", "127.0.0.1:" + listenPort}, [2]string{"udp", "127.0.0.1:" + listenPort},
		[2]string{"tcp", "[::1]:" + listenPort}, [2]string{"unix", "@redteam-abstract"}))
	canary := exec.Command("sleep", "3600")
	must(x.t, canary.Start())
	must(x.t, os.WriteFile(filepath.Join(x.l.Net, "listener.pid"), []byte(strconv.Itoa(canary.Process.Pid)+"\n"), 0o644))
	return func() {
		canary.Process.Kill()
		canary.Wait()
		ls.stop()
	}
}

// probe sends each listener a line and waits for hits.log to hold them all,
// then empties it: a listener that hears nothing cannot pass a row.
func (x *rowRun) probe(hits string, addrs [][2]string) {
	want := map[string]bool{}
	for _, a := range addrs {
		line := "PROBE " + a[0] + " " + a[1]
		c, err := net.Dial(a[0], a[1])
		must(x.t, err)
		_, err = c.Write([]byte(line))
		must(x.t, err)
		c.Close()
		want[line] = true
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(hits)
		heard := 0
		for line := range want {
			if bytes.Contains(b, []byte(line)) {
				heard++
			}
		}
		if heard == len(want) {
			must(x.t, os.Remove(hits))
			return
		}
		if time.Now().After(deadline) {
			x.t.Fatalf("the listeners did not all hear their probe: want %v, hits.log:\n%s", want, b)
		}
	}
}

// fixedListeners starts the fixed port's and the abstract socket's
// listeners on ls, all or none.
func fixedListeners(ls *listeners) error {
	var started []io.Closer
	var streams []net.Listener
	for _, a := range [][2]string{{"tcp", "127.0.0.1:" + listenPort}, {"tcp", "[::1]:" + listenPort}, {"unix", "@redteam-abstract"}} {
		ln, err := net.Listen(a[0], a[1])
		if err != nil {
			for _, c := range started {
				c.Close()
			}
			return err
		}
		started, streams = append(started, ln), append(streams, ln)
	}
	udp, err := net.ListenPacket("udp", "127.0.0.1:"+listenPort)
	if err != nil {
		for _, c := range started {
			c.Close()
		}
		return err
	}
	for _, ln := range streams {
		ls.stream(ln.Addr().Network()+":"+ln.Addr().String(), ln)
	}
	ls.packets("udp:127.0.0.1:"+listenPort, udp)
	return nil
}

// reap kills what the row's commands left running (they carry its tag), and
// fails the row if something survives that.
func (x *rowRun) reap() {
	var left map[int]string
	for range 10 {
		if left = tagged(x.tag.String()); len(left) == 0 {
			return
		}
		for pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(200 * time.Millisecond)
	}
	x.t.Errorf("processes left behind that SIGKILL did not end: %v", left)
}

// mcpSession is the runner `mcp`: a shellgate mcp session over stdio, driven
// by the row's steps, with the Go SDK's client. $LAB/live/ gets each tool
// result (results.jsonl), each elicitation's text (elicitations.txt), and each
// shell call's time in ms (elapsed_ms.txt).
func (x *rowRun) mcpSession(r corpus.Row) error {
	var steps [][]json.RawMessage
	if err := json.Unmarshal([]byte(x.sub(r.Fields["command"])), &steps); err != nil {
		x.t.Fatalf("the step list is not JSON: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), rowTimeout)
	defer cancel()
	live := func(name, text string) {
		f, err := os.OpenFile(filepath.Join(x.l.Live, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		must(x.t, err)
		defer f.Close()
		f.WriteString(text)
	}
	var mu sync.Mutex
	answer := "" // the elicit option of the call under way
	client := mcp.NewClient(&mcp.Implementation{Name: "corpus", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			a := answer
			mu.Unlock()
			live("elicitations.txt", req.Params.Message+"\n---\n")
			x.note("elicitation, answered %q: %s", a, cut(req.Params.Message))
			if a == "allow_once" || a == "allow_session" {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": a}}, nil
			}
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	var stderr bytes.Buffer
	server := x.command(context.Background(), x.binEnv(), x.l.Root, x.bin, "mcp", "--root", x.l.Root)
	server.Stderr = &stderr
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: server}, nil)
	if err != nil {
		return fmt.Errorf("connect: %v\n%s", err, stderr.String())
	}
	closed := false
	defer func() {
		if !closed {
			cs.Close()
		}
		x.note("server stderr:\n%s", cut(stderr.String()))
	}()
	job := ""
	// host_bg's scripts, waited for before the session ends (its steps, the
	// row's followup and harm_check come after them).
	var hostBg sync.WaitGroup
	defer hostBg.Wait()
	call := func(tool string, args map[string]any, timeout time.Duration) {
		cctx, ccancel := context.WithTimeout(ctx, timeout)
		defer ccancel()
		start := time.Now()
		res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		took := time.Since(start).Milliseconds()
		if tool == "run_shell_command" {
			live("elapsed_ms.txt", fmt.Sprintf("%d\n", took))
		}
		if err != nil {
			x.note("%s (%d ms): %v", tool, took, err)
			return
		}
		b, _ := json.Marshal(res.StructuredContent)
		live("results.jsonl", string(b)+"\n")
		x.note("%s (%d ms): %s", tool, took, brief(b))
		var got struct {
			Data struct {
				Job struct {
					ID string `json:"id"`
				} `json:"job"`
			} `json:"data"`
		}
		if json.Unmarshal(b, &got) == nil && got.Data.Job.ID != "" {
			job = got.Data.Job.ID
		}
	}
	for _, step := range steps {
		var op string
		if len(step) == 0 || json.Unmarshal(step[0], &op) != nil {
			x.t.Fatalf("bad step %s", step)
		}
		str := func(i int) string { return stepArg[string](x.t, step, i, "string") }
		num := func(i int) float64 { return stepArg[float64](x.t, step, i, "number") }
		switch op {
		case "call", "bg", "tty":
			args, elicit, timeout := shellCall(x.t, op, step)
			mu.Lock()
			answer = elicit
			mu.Unlock()
			call("run_shell_command", args, timeout)
		case "job_input":
			call("job_input", map[string]any{"job_id": job, "text": str(1)}, 30*time.Second)
		case "job_output":
			call("job_output", map[string]any{"job_id": job, "wait_ms": num(1)}, 30*time.Second)
		case "job_kill":
			call("job_kill", map[string]any{"job_id": job}, 30*time.Second)
		case "sleep":
			time.Sleep(time.Duration(num(1) * float64(time.Second)))
		case "host":
			out, err := x.host(str(1))
			x.note("host (%v): %s", err, out)
		case "host_bg": // the user on the host, beside the steps that follow (a call under way)
			script := str(1)
			hostBg.Go(func() {
				out, err := x.host(script)
				x.note("host_bg (%v): %s", err, out)
			})
		case "watches":
			n := inotifyWatches(server.Process.Pid)
			must(x.t, os.WriteFile(str(1), []byte(strconv.Itoa(n)+"\n"), 0o644))
			x.note("inotify watches of the server and its helper: %d", n)
		case "sg_run": // another project's one-shot shellgate run, meanwhile
			dir := str(1)
			out, err := x.command(ctx, x.binEnv(), dir, x.bin, "run", "--json", "--root", dir, "--", str(2)).Output()
			x.note("shellgate run in %s (%v): %s", dir, err, brief(out))
		case "disconnect":
			closed = true
			x.note("disconnect: %v", cs.Close())
		case "kill9":
			closed = true
			left, _ := runner.Descendants(server.Process.Pid)
			server.Process.Kill()
			x.note("SIGKILL to the server: %v", cs.Close())
			// What the server left ends on its own (its session's helper
			// cleans up): harm is checked once it has, as for runKilled.
			if !waitGone(left, 10*time.Second) {
				x.note("processes of the killed server still there after 10s: %v", left)
			}
		default:
			x.t.Fatalf("unknown step %s", step)
		}
	}
	return nil
}

// stepArg is argument i of an mcp row's step, a T (what names it): the row is
// broken when it is not one.
func stepArg[T any](t *testing.T, step []json.RawMessage, i int, what string) T {
	var v T
	if i >= len(step) || json.Unmarshal(step[i], &v) != nil {
		t.Fatalf("step %s: argument %d is not a %s", step, i, what)
	}
	return v
}

// shellCall reads an mcp row's step "call", "bg" or "tty": run_shell_command's
// arguments, the answer to an elicitation while it runs, and the call's
// timeout. Its options are arguments, but elicit (the answer; "decline",
// what a user not asked about it would answer, by default) and rpc_timeout
// (seconds, 120 by default).
func shellCall(t *testing.T, op string, step []json.RawMessage) (args map[string]any, answer string, timeout time.Duration) {
	args = map[string]any{"command": expandGenerated(stepArg[string](t, step, 1, "string"))}
	opts := map[string]any{}
	if len(step) > 2 && json.Unmarshal(step[2], &opts) != nil {
		t.Fatalf("step %s: bad options", step)
	}
	answer, timeout = "decline", 120*time.Second
	for k, v := range opts {
		switch k {
		case "elicit":
			answer, _ = v.(string)
		case "rpc_timeout":
			s, _ := v.(float64)
			timeout = time.Duration(s * float64(time.Second))
		default:
			args[k] = v
		}
	}
	if op == "bg" {
		args["run_in_background"] = true
	}
	if op == "tty" {
		args["tty"] = true
	}
	return args, answer, timeout
}

// expandGenerated expands the placeholders of commands too big for the
// corpus file (exh-parser-dos).
func expandGenerated(cmd string) string {
	var b strings.Builder
	switch cmd {
	case "{TRUE_1MIB}": // 1 MiB of `true;`
		return strings.Repeat("true;", 1<<20/5)
	case "{ARITH_2400x200}": // 2400 arithmetic expansions of 200 terms each
		term := "$((" + strings.Repeat("1+", 199) + "1))"
		for i := range 2400 {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString(": " + term)
		}
		return b.String()
	case "{NESTED_SUBST_250}": // command substitutions nested 250 deep
		return "echo " + strings.Repeat("$(echo ", 250) + "x" + strings.Repeat(")", 250)
	case "{CASE_60000}": // a case with 60000 patterns
		b.WriteString("case x in ")
		for i := range 60000 {
			fmt.Fprintf(&b, "p%d) true;; ", i)
		}
		b.WriteString("esac")
		return b.String()
	}
	return cmd
}

// inotifyWatches counts the inotify watches held by pid and its descendants
// (the MCP server and its sandbox helper).
func inotifyWatches(pid int) int {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 {
			if fields := strings.Fields(string(stat[i+1:])); len(fields) > 1 {
				ppid, _ := strconv.Atoi(fields[1])
				children[ppid] = append(children[ppid], p)
			}
		}
	}
	n := 0
	for todo := []int{pid}; len(todo) > 0; {
		p := todo[0]
		todo = append(todo[1:], children[p]...)
		infos, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fdinfo/*", p))
		for _, info := range infos {
			f, err := os.Open(info)
			if err != nil {
				continue
			}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if strings.HasPrefix(sc.Text(), "inotify wd:") {
					n++
				}
			}
			f.Close()
		}
	}
	return n
}
