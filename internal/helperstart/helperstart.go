// Package helperstart starts the sandbox's session helper process: this
// executable again, as argv[0] Arg0, in new namespaces, with the other end of a
// control socket as fd CtlFD. Package sandbox talks to it.
//
// It is a package of its own, with few imports, so that the shellgate command
// can start the helper of a one-shot `run` while its own packages initialise
// (Prestart): most of the helper's start-up — the fork, the exec and the Go
// runtime's initialisation of every package — then overlaps with shellgate's
// instead of following it. A helper is only a process waiting for its setup
// message until package sandbox adopts it (Take); one nobody takes is killed
// and reaped by Discard.
package helperstart

// Arg0 is the argv[0] that makes this executable a session helper.
const Arg0 = "shellgate-sandbox-session"

// CtlFD is the helper's end of the control socket.
const CtlFD = 3
