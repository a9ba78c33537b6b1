// Package unixgate keeps a sandbox session's commands away from the host's
// pathname unix sockets: a command may connect and send only to sockets
// bound inside the session, whenever the host's were bound and by whatever
// path they are named.
//
// Neither the network namespace (it does not separate pathname sockets)
// nor Landlock before ABI 9 (it does not govern connect) does that. Where
// the session's Landlock domain handles LANDLOCK_ACCESS_FS_RESOLVE_UNIX
// (ABI 9), the kernel does it: only servers made in the domain are
// reachable. Elsewhere a seccomp filter hands connect, sendto with an
// address, sendmsg and sendmmsg to a supervisor in the session's helper,
// which performs the call itself on the command's own socket (pidfd_getfd)
// after checking, on the socket file it opened, that a socket of the
// session's network namespace is bound there (sock_diag). The kernel never
// resolves the command's path again, so no race (a symlink swapped, the
// address rewritten, the fd replaced) gets past the check, which is why the
// supervisor does not answer "continue", not even for other families.
//
// Known limits: sock_diag gives a socket file's inode number in 32 bits, so
// on a file system with larger numbers a host socket whose number matches a
// session socket's in those bits, on the same device, would pass; a socket
// bound in a network namespace a command made itself is refused; a server
// sees the helper as its peer (SO_PEERCRED), and explicit credentials
// (SCM_CREDENTIALS) are refused; the supervisor performs a call with the
// helper's capabilities in the session's own namespaces.
package unixgate

// Layer names the guard in a sandbox report: "landlock-v9" or "supervisor".
const Layer = "unix_sockets"
