package gitstate

import (
	"bytes"
	"strings"
)

// TodoFiles are the todo lists git's sequencer reads, relative to a git
// directory: an interactive rebase's (which `git rebase --continue` runs)
// and cherry-pick's and revert's.
var TodoFiles = []string{"rebase-merge/git-rebase-todo", "sequencer/todo"}

// ExecLines returns the command of every line of a todo list that git's
// sequencer would take for an exec (sequencer.c: is_command): after spaces
// and tabs, "exec" or "x", then a space, tab, CR or the line's end; the
// command is the rest of the line, its leading blanks and a final CR
// dropped. Git stops reading at a NUL; this reads on, so it finds no fewer.
func ExecLines(todo []byte) []string {
	var cmds []string
	for _, line := range bytes.Split(todo, []byte("\n")) {
		s := strings.TrimLeft(string(line), " \t")
		rest, ok := strings.CutPrefix(s, "exec")
		if !ok {
			rest, ok = strings.CutPrefix(s, "x")
		}
		if !ok || (rest != "" && !strings.ContainsRune(" \t\r\x00", rune(rest[0]))) {
			continue
		}
		rest = strings.TrimSuffix(rest, "\r")
		cmds = append(cmds, strings.TrimLeft(rest, " \t"))
	}
	return cmds
}
