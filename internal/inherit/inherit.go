// Package inherit keeps the descriptors a process was started with from
// reaching the programs it starts. A descriptor its parent left open across
// exec (an agent's log file, the write end of another program's pipe) would
// otherwise pass through shellgate to every command, sandboxed or not: a
// file outside the root the command could write with `>&N`, which no path
// rule sees because no path is opened.
package inherit

// Stop marks every descriptor from first up close-on-exec, without closing
// any: this process keeps using what it holds, and the programs it starts get
// only what it hands them (standard files and exec.Cmd's ExtraFiles, which
// are placed anew at each start).
func Stop(first int) error { return stop(first) }
