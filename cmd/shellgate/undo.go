package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/checkpoint"
	"github.com/shellgate/shellgate/internal/output"
)

// undoTTY is where undo asks its question (tests answer it).
var undoTTY = openTTY

// recentChanges is how many commands `shellgate changes` lists by default.
const recentChanges = 20

// changeRecord is one command in `shellgate changes --json`.
type changeRecord struct {
	shellgate.CheckpointRecord
	Changes *shellgate.ChangeSummary `json:"changes,omitempty"`
	Error   string                   `json:"error,omitempty"`
}

// openStore loads the configuration as run would and opens the root's checkpoints.
// Its failure reports errors, on stdout too with --json.
func openStore(cmd string, args []string, stdout, stderr io.Writer, head func(io.Writer), extra func(*flag.FlagSet)) (*shellgate.Checkpoints, []string, failure, int) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	var cf commonFlags // which root, and its configuration: no command is run
	cf.registerFiles(fs)
	fs.StringVar(&cf.checkpoints, "checkpoints", "", "read the checkpoints even where the configuration turns them off ([checkpoints] enabled = false): `on|off`, and off is refused (it leaves nothing to read)")
	var asJSON bool
	fs.BoolVar(&asJSON, "json", false, "print JSON on stdout")
	if extra != nil {
		extra(fs)
	}
	fl := failure{cmd: cmd, json: wantsJSON(args), stdout: stdout, stderr: stderr}
	if help, err := parseFlags(fs, args, head, stdout); help {
		return nil, nil, fl, 0
	} else if err != nil {
		return nil, nil, fl, fl.usage(err.Error())
	}
	fl.json = asJSON
	if cf.checkpoints == "off" {
		// It could only make the command fail, after reading the configuration.
		return nil, nil, fl, fl.usage(fmt.Sprintf("--checkpoints off leaves %s nothing to read: leave it out, or give on to read the checkpoints where the configuration turns them off", cmd))
	}
	cfg, _, err := cf.config(stderr)
	if err != nil {
		if _, ok := err.(*usageError); ok {
			return nil, nil, fl, fl.usage(err.Error())
		}
		return nil, nil, fl, fl.fail(exitShellgate, envelope.InvalidParam, err.Error())
	}
	cp, err := shellgate.OpenCheckpoints(cfg)
	if err != nil {
		return nil, nil, fl, fl.fail(exitShellgate, envelope.ExecutionError, err.Error())
	}
	return cp, fs.Args(), fl, -1
}

// commandID reads the optional command number; 0 means the last one.
func commandID(fl failure, args []string) (int, int) {
	switch len(args) {
	case 0:
		return 0, -1
	case 1:
		n, err := strconv.Atoi(strings.TrimPrefix(args[0], "#"))
		if err != nil || n < 1 {
			return 0, fl.usage(fmt.Sprintf("%q is not a command number: one that `shellgate changes` lists, from 1", args[0]))
		}
		return n, -1
	}
	return 0, fl.usage("at most one command number")
}

// recordCode is the error code of a command number the checkpoints do not hold
// (NOT_FOUND), or of another error reading its record.
func recordCode(err error) envelope.Code {
	var none *shellgate.NoCheckpointError
	if errors.As(err, &none) {
		return envelope.NotFound
	}
	return envelope.ExecutionError
}

// recordExit is the exit status of recordCode's error: NOT_FOUND is a "no"
// (exitNo), as undo with no checkpoints at all; another is shellgate's.
func recordExit(err error) int {
	if recordCode(err) == envelope.NotFound {
		return exitNo
	}
	return exitShellgate
}

// listHint adds to the error of a command number the checkpoints do not
// hold where to see those they do.
func listHint(err error) error {
	var none *shellgate.NoCheckpointError
	if errors.As(err, &none) && none.Last > 0 {
		return fmt.Errorf("%w (`shellgate changes` lists them)", err)
	}
	return err
}

// cmdChanges lists what recent commands changed in the root, or what one did.
func cmdChanges(args []string, stdout, stderr io.Writer) int {
	head := func(w io.Writer) {
		fmt.Fprint(w, `Usage: shellgate changes [flags] [N]

Lists what each recent command run through shellgate changed in the project root
(added, modified, deleted, mode; and how many files of .git), with its command line and
time, newest last; with N, every path command N changed. "shellgate undo N" puts the
root back as it was before command N.

Exits 0 when listed, 1 when the checkpoints hold no command N, 64 on bad usage,
125 on an error (a bad configuration, a store that cannot be read).

Flags:
`)
	}
	cp, rest, fl, code := openStore("changes", args, stdout, stderr, head, nil)
	if code >= 0 {
		return code
	}
	asJSON := fl.json
	defer cp.Close() // stops git packing the store, if an undo started it
	id, code := commandID(fl, rest)
	if code >= 0 {
		return code
	}
	recs, err := cp.Records()
	if err != nil {
		return fl.fail(exitShellgate, envelope.ExecutionError, err.Error())
	}
	if id != 0 {
		r, err := cp.Record(id)
		if err != nil {
			return fl.fail(recordExit(err), recordCode(err), listHint(err).Error())
		}
		recs = []shellgate.CheckpointRecord{r}
	} else if len(recs) > recentChanges {
		recs = recs[len(recs)-recentChanges:]
	}
	out := make([]changeRecord, len(recs))
	for i, r := range recs {
		out[i].CheckpointRecord = r
		sum, err := cp.Changes(r.ID)
		if err != nil {
			out[i].Error = err.Error()
			continue
		}
		out[i].Changes = &sum
	}
	if asJSON {
		if id != 0 {
			writeJSON(stdout, out[0])
		} else {
			writeJSON(stdout, out)
		}
		return 0
	}
	if len(out) == 0 {
		fmt.Fprintf(stdout, "No checkpoints yet for %s.\n", cp.Root())
		return 0
	}
	for _, r := range out {
		what := "?"
		switch {
		case r.Error != "":
			what = "error: " + r.Error
		case r.Changes != nil:
			what = r.Changes.Text()
		}
		fmt.Fprintf(stdout, "%4d  %s  %-8s %s\n      %s\n", r.ID, r.Time.Local().Format(time.DateTime), r.Label, oneLine(r.Command), what)
		if id != 0 && r.Changes != nil {
			for _, c := range r.Changes.Changes {
				fmt.Fprintf(stdout, "      %-8s %s%s\n", c.Kind, checkpoint.ShowPath(c.Path), c.Note())
			}
		}
	}
	return 0
}

// oneLine shortens a command line for a listing.
func oneLine(s string) string {
	s, _ = output.Text([]byte(s)) // the agent's command line: no terminal control reaches the user's terminal
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		s = s[:97] + "..."
	}
	return s
}

// cmdUndo puts the root back as it was before a command.
func cmdUndo(args []string, stdout, stderr io.Writer) int {
	head := func(w io.Writer) {
		fmt.Fprint(w, `Usage: shellgate undo [flags] [N]

Puts the project root back as it was before command N (see "shellgate changes"), the
last one by default: every file kept in the checkpoint, .git included, byte for byte
and with its mode; files made since are removed (what .gitignore ignores and the
checkpoint left out stays as it is). The root as it is now is checkpointed first, so
an undo is undone by "shellgate undo" again. If the root changed after command N
(later commands, your own edits), it asks first; --yes answers for scripts.

Exits 0 when undone; 1 when not (declined, a question no one could answer, no
checkpoints, or none of command N); 64 on bad usage; 125 on an error (a bad
configuration, a store that cannot be read or restored).

Flags:
`)
	}
	var yes bool
	cp, rest, fl, code := openStore("undo", args, stdout, stderr, head, func(fs *flag.FlagSet) {
		fs.BoolVar(&yes, "yes", false, "do not ask before overwriting changes made after the command")
	})
	if code >= 0 {
		return code
	}
	asJSON := fl.json
	defer cp.Close() // stops git packing the store, if an undo started it
	id, code := commandID(fl, rest)
	if code >= 0 {
		return code
	}
	defaulted := id == 0
	if id == 0 {
		recs, err := cp.Records()
		if err != nil {
			return fl.fail(exitShellgate, envelope.ExecutionError, err.Error())
		}
		if len(recs) == 0 {
			return fl.fail(exitNo, envelope.NotFound, "no checkpoints yet for "+cp.Root())
		}
		id = recs[len(recs)-1].ID
	}
	r, err := cp.Record(id)
	if err != nil {
		return fl.fail(recordExit(err), recordCode(err), listHint(err).Error())
	}
	since, err := cp.Since(id)
	if err != nil {
		return fl.fail(exitShellgate, envelope.ExecutionError, err.Error())
	}
	if !since.Empty() && !yes {
		in, out := undoTTY()
		if in == nil {
			return fl.fail(exitNo, envelope.ApprovalRequired, fmt.Sprintf("the root changed after command %d (%s: %s): undoing it would take that back too. Run with --yes to do it anyway (it is checkpointed first).", id, since.Text(), checkpoint.Brief(since.Changes)))
		}
		defer in.Close()
		fmt.Fprintf(out, "The root changed after command %d (%s):\n", id, since.Text())
		for i, c := range since.Changes {
			if i == 10 {
				fmt.Fprintf(out, "  … %d more\n", len(since.Changes)-i)
				break
			}
			fmt.Fprintf(out, "  %-8s %s%s\n", c.Kind, checkpoint.ShowPath(c.Path), c.Note())
		}
		fmt.Fprintf(out, "Undo command %d (%s) and these too? They are checkpointed first. [y/N] ", id, oneLine(r.Command))
		answer, _ := bufio.NewReader(in).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			return fl.fail(exitNo, envelope.ApprovalRequired, "not undone")
		}
	}
	undo, sum, err := cp.Undo(id)
	if err != nil {
		return fl.fail(exitShellgate, envelope.ExecutionError, err.Error())
	}
	if asJSON {
		writeJSON(stdout, map[string]any{"undone": id, "command": r.Command, "undo": undo, "changes": sum})
		return 0
	}
	fmt.Fprintf(stdout, "Undid command %d (%s): %s.\n", id, oneLine(r.Command), sum.Text())
	if later := sum.LaterText(); later != "" {
		// the user's own edits may be among them: never taken back unsaid
		fmt.Fprintf(stdout, "That took back too what changed after command %d (later commands, edits by hand): %s.\n", id, later)
	}
	if raced := sum.RacedText(); raced != "" {
		fmt.Fprintf(stdout, "%s.\n", raced)
	}
	fmt.Fprintf(stdout, "The root as it was just before is checkpoint %d: `shellgate undo %d` puts it back.\n", undo, undo)
	writeNotRestored(stdout, sum.NotRestored)
	if defaulted && sum.Empty() {
		if c, ok := lastChange(cp, id); ok {
			fmt.Fprintf(stdout, "The last command that changed the project is %d (%s): `shellgate undo %d` takes it back.\n", c.ID, oneLine(c.Command), c.ID)
		}
	}
	return 0
}

// lastChange is the newest of the recent commands before command id that
// changed the root, for an undo of the last command that changed nothing.
func lastChange(cp *shellgate.Checkpoints, id int) (shellgate.CheckpointRecord, bool) {
	recs, err := cp.Records()
	if err != nil {
		return shellgate.CheckpointRecord{}, false
	}
	for i, n := len(recs)-1, 0; i >= 0 && n < recentChanges; i-- {
		if recs[i].ID >= id {
			continue
		}
		n++
		if sum, err := cp.Changes(recs[i].ID); err == nil && !sum.Empty() {
			return recs[i], true
		}
	}
	return shellgate.CheckpointRecord{}, false
}

// writeNotRestored says which paths an undo left as they are, and why.
func writeNotRestored(w io.Writer, left []checkpoint.NotRestored) {
	if len(left) == 0 {
		return
	}
	fmt.Fprintf(w, "Not restored (%d, left as they are):\n", len(left))
	for _, l := range left {
		fmt.Fprintf(w, "  %s: %s\n", checkpoint.ShowPath(l.Path), l.Why)
	}
}
