package sandbox

import (
	"cmp"
	"fmt"
	"os"
	"strconv"
	"syscall"

	"github.com/shellgate/shellgate/internal/cgroup"
)

// sessionCgroup is what the session's cgroup gives: the layers it makes,
// what is missing, and whether the helper was born in it.
type sessionCgroup struct {
	layers  map[string]string
	missing []string
	memory  int64
	born    bool
}

// makeCgroup makes the session's cgroup where it can (s.group), before the
// helper starts, so that on cgroup2 the helper is born in it: limited to
// limits.Procs processes and limits.Memory bytes (0: the default, best
// effort: without the memory controller the session keeps its per-command
// cgroups, and the report says so).
func (s *Session) makeCgroup(limits Limits) *sessionCgroup {
	procs := cmp.Or(max(limits.Procs, 0), DefaultProcs)
	s.procs = procs
	memory := limits.Memory
	byDefault := memory == 0
	if byDefault {
		memory = DefaultMemory()
	}
	cg := &sessionCgroup{layers: map[string]string{}, memory: memory}
	g, err := cgroup.Make(procs, memory)
	if err != nil && byDefault && memory > 0 {
		if g, err = cgroup.Make(procs, 0); err == nil {
			g.Lack("memory", "no memory cgroup controller: the default limit does not apply")
		}
	}
	if err != nil {
		cg.noCgroup(err)
		return cg
	}
	s.group = g
	cg.layers[LayerProcs] = "cgroup"
	if why, ok := g.Missing["pids"]; ok {
		cg.layers[LayerProcs] = "rlimit"
		if os.Getuid() == 0 {
			cg.missing = append(cg.missing, fmt.Sprintf("%s: %s (the process limit does not bind root)", LayerProcs, why))
		}
	}
	if why, ok := g.Missing["memory"]; ok {
		cg.missing = append(cg.missing, "memory: "+why)
	} else if memory > 0 {
		cg.layers[LayerMemory] = strconv.FormatInt(memory>>20, 10) + "MiB"
	}
	return cg
}

// noCgroup records that the session has no cgroup, for err.
func (cg *sessionCgroup) noCgroup(err error) {
	cg.layers = map[string]string{LayerProcs: "rlimit"}
	cg.missing = nil
	if os.Getuid() == 0 {
		cg.missing = append(cg.missing, fmt.Sprintf("%s: shellgate cannot make a cgroup (%v), and RLIMIT_NPROC does not bind root", LayerProcs, err))
	}
	if cg.memory > 0 {
		cg.missing = append(cg.missing, fmt.Sprintf("%s: shellgate cannot make a cgroup (%v), so the session has no memory limit", LayerMemory, err))
	}
}

// A spareCgroup is what cgroup.Group.Command returned for a command to come,
// or what release kept of one for the next: then files are kept's.
type spareCgroup struct {
	dir, kind string
	files     []*os.File
	kept      *cgroup.Kept
}

// hold returns what holds c's cgroup2 directory open for its next Reuse, or
// nil where there is none (v1): then files are the caller's to close.
func (c *spareCgroup) hold() *cgroup.Kept {
	if c.kept == nil && c.kind == cgroup.V2 && len(c.files) == 1 {
		c.kept = cgroup.Keep(c.files[0])
	}
	return c.kept
}

func (c *spareCgroup) close() {
	if c.kept != nil {
		c.kept.Close()
	} else {
		cgroup.CloseFiles(c.files)
	}
}

// takeSpare returns the spare cgroup, if there is one, for a command to use.
func (s *Session) takeSpare() *spareCgroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.spare
	s.spare = nil
	return c
}

// makeSpare makes a command's cgroup ahead of the command, unless there is a
// spare already or the session is closing. A cgroup it makes as Close
// begins is removed again; one made before is Close's to remove with the
// rest (cgroup.Group.Remove).
func (s *Session) makeSpare() {
	s.mu.Lock()
	if s.spare != nil || s.noSpare {
		s.mu.Unlock()
		return
	}
	s.cgroupNames++
	id := s.cgroupNames // its name's
	s.mu.Unlock()
	dir, kind, files, err := s.group.Command(id)
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.spare != nil || s.noSpare {
		cgroup.CloseFiles(files)
		syscall.Rmdir(dir)
		return
	}
	s.spare = &spareCgroup{dir, kind, files, nil}
}

// Tree lists the live processes of command pid's cgroup — all it started,
// wherever they went — as runner.TreeLauncher asks. A cgroup found empty is
// released: removed, or kept for the next command (release).
func (s *Session) Tree(pid int) []int {
	tree := s.tree(pid)
	if tree == "" {
		return nil
	}
	pids := cgroup.Tree(tree, s.helper.Process.Pid)
	if len(pids) == 0 {
		s.release(pid, tree)
	}
	return pids
}

// KillTree signals every process of command pid's cgroup.
func (s *Session) KillTree(pid int, sig syscall.Signal) {
	if tree := s.tree(pid); tree != "" {
		s.group.KillAll(tree, s.helper.Process.Pid, sig)
	}
}

func (s *Session) tree(pid int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.trees[pid]
}

// release removes command pid's cgroup if nothing is left in it, or keeps
// it for the next command: a command that left background processes keeps
// it until they are gone, or until Close.
//
// The next command's, when there is no spare and the cgroup is empty
// (cgroup.Group.Reuse): an agent's commands, one after the other, most
// leaving nothing behind, then run in one cgroup, with no mkdir and rmdir a
// command. Not a cgroup whose command the process limit's watch stopped:
// its kill may still be under way (stopOverLimit). Under s.mu from the look
// to the rmdir: the cgroup of a pid released twice at once (the command's
// end, and a Tree that found it empty) is neither removed once it is the
// spare nor made the spare once removed.
func (s *Session) release(pid int, tree string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.trees[pid] != tree {
		return // released already
	}
	if s.group != nil && s.spare == nil && !s.noSpare && !s.overLimit[tree] {
		kept := s.kept[tree]
		if kind, files, ok := s.group.Reuse(tree, kept); ok {
			delete(s.kept, tree) // the spare's now
			s.forgetTree(pid, tree)
			s.spare = &spareCgroup{tree, kind, files, kept}
			return
		}
	}
	// A cgroup is a directory: rmdir alone (os.Remove tries unlink first).
	if err := syscall.Rmdir(tree); err != nil && err != syscall.ENOENT {
		return
	}
	s.forgetTree(pid, tree)
}

// forgetTree forgets command pid's cgroup tree, with s.mu held; the limit's
// watch stops with the last.
func (s *Session) forgetTree(pid int, tree string) {
	delete(s.trees, pid)
	if k := s.kept[tree]; k != nil {
		k.Close()
		delete(s.kept, tree)
	}
	delete(s.overLimit, tree)
	delete(s.returned, tree)
	if len(s.trees) == 0 && s.limitArmed {
		s.limitArm.Stop()
		s.limitArmed = false
	}
}
