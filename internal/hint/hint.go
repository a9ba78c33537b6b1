// Package hint explains a failed command whose output looks like the
// sandbox's doing (a read-only path, a refused connection, a path outside
// the view) or the egress proxy's, so that the model does not take it for a
// broken tool, and says what the user can change. A hint is one note of the
// envelope: "" when nothing fits, or when the command succeeded. Did and
// Appeared word the notes of what the sandbox did around a command and of
// what appeared in the project for review.
package hint

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/internal/protect"
)

// Sandbox explains a failure that looks like the sandbox's doing, and says
// how it is allowed. network says whether the session has the network;
// hostPorts are the ports forwarded to the host's loopback ([sandbox]
// host_ports).
func Sandbox(d *envelope.Data, network bool, hostPorts ...int) string {
	if d.ExitCode != nil && *d.ExitCode == 0 {
		return ""
	}
	text := d.Stderr + d.Stdout
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(text, s) {
				return true
			}
		}
		return false
	}
	if h := readOnlyHint(has); h != "" {
		return h
	}
	return refusalHint(has, text, network, hostPorts)
}

// readOnlyHint explains a write the view's read-only mounts refused: a
// protected path, or a path outside the root.
func readOnlyHint(has func(...string) bool) string {
	// As bash, coreutils and Python say them, as Go does, and as Node does.
	readOnly := has("Read-only file system", "read-only file system", "EROFS")
	busy := has("Device or resource busy", "resource busy", "EBUSY")
	// A submodule's config a command put there is not bound but refused
	// (the copy-up supervisor: EPERM), as git's config.lock is.
	refused := has("Operation not permitted", "EPERM") && has("could not lock config file")
	switch {
	case !readOnly && !busy && !refused:
		return ""
	case has(".git/config"):
		// A protected path, or a directory leading to one, is a mount point:
		// replacing it by a rename (git's config.lock) or removing it is EBUSY.
		return "The sandbox keeps .git/config read-only: git runs programs it names (hooks, fsmonitor, pager). Give settings per command instead: `git -c user.name=NAME -c user.email=EMAIL commit …`, or GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME, GIT_COMMITTER_EMAIL; the user can change .git/config outside the sandbox."
	case has(".git/modules/", ".git/worktrees/") && has("config"):
		// git submodule update rewrites core.worktree in each submodule's
		// config, every time.
		return "The sandbox keeps the config of a submodule or worktree read-only (in .git/modules or .git/worktrees): git runs programs it names. `git submodule update` rewrites it each time: check out the recorded commit instead, `git -C PATH checkout --detach $(git rev-parse HEAD:PATH)`, or the user runs it outside the sandbox."
	case has("packed-refs"):
		// In a linked worktree the main repository's git directory is
		// read-only but for objects, refs and logs.
		return "The sandbox keeps the main repository's packed-refs read-only in a linked worktree (git rewrites it by a rename in a directory where git looks for its config). Committing, creating branches and fetching work; deleting a packed branch or `git pack-refs` is for the user to run outside the sandbox."
	case refused:
		return ""
	case has(protect.RootPaths()...):
		return "The sandbox keeps protected paths read-only (.git/hooks, editor and agent settings, CI workflows, .envrc …): they run later outside any check. The user can change them outside the sandbox, or run with --sandbox off."
	case readOnly:
		return "The sandbox keeps this path read-only: it is outside the project root. Write inside the project instead; the user can add writable paths with [policy] writable or run with --sandbox off."
	}
	return ""
}

// refusalHint explains what else the sandbox refuses: a host's unix socket,
// a write Landlock refused, the network.
func refusalHint(has func(...string) bool, text string, network bool, hostPorts []int) string {
	switch {
	case !network && has("Permission denied", "permission denied", "EACCES") && has("connect", "socket"):
		// unixgate refuses a host's unix socket with EACCES.
		return "If this was a connection to a unix socket this session did not bind (a host daemon's: Docker, a database, an agent), the sandbox refused it: commands reach only their own session's sockets. The user can run it outside the sandbox (--sandbox off)."
	case has("Operation not permitted", "operation not permitted", "EPERM") && pycName().MatchString(text):
		return "The sandbox refuses Python bytecode (.pyc) in the project: the host's python would run one in place of its source, which no diff shows. This session's python keeps its caches in $PYTHONPYCACHEPREFIX instead, and skips one it cannot write. Leave them out (removing one works)."
	case has("Permission denied", "permission denied", "EACCES", "Operation not permitted", "operation not permitted", "EPERM") && !has("sudo"):
		socket := ""
		if !network {
			socket = " or a connection to a unix socket this session did not bind"
		}
		return "If this was a write outside the project root, $TMPDIR or the tool caches" + socket + ", the sandbox refused it. Write inside the project instead; the user can add writable paths with [policy] writable or run with --sandbox off."
	case !network && has(refusedMarks...):
		return localPortHint(refusedPort(text), hostPorts)
	case !network && len(hostPorts) > 0 && has("Connection reset by peer", "connection reset by peer", "ECONNRESET"):
		return fmt.Sprintf("If this was a connection to a port forwarded to the host (%s), nothing answered on the host's loopback: the server there is not running, or listens elsewhere.", joinPorts(hostPorts))
	case !network && has("Network is unreachable", "Could not resolve host", "Temporary failure in name resolution", "Name or service not known", "getaddrinfo"):
		return "The sandbox has no network but a loopback of this session's own: servers started by this session's commands answer on localhost, nothing else does. " + networkOn
	}
	return ""
}

// pycName finds a .pyc named in an error (the sandbox's helper refuses them
// in the root: sandbox/helper judgeBytecode).
var pycName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\.pyc\b`) })

// Egress explains a failure with the network allow-listed: the proxy's
// refusals while the command ran (refused, host:port each), or a client that
// ignored the proxy; else as Sandbox with the network off.
func Egress(d *envelope.Data, refused []string, hostPorts ...int) string {
	if d.ExitCode != nil && *d.ExitCode == 0 {
		return ""
	}
	text := d.Stderr + d.Stdout
	switch {
	case len(refused) > 0 && !strings.Contains(text, "is not on the network allow-list"):
		return "The network is allow-listed, and shellgate's proxy refused " + strings.Join(refused, ", ") + " while this command ran: not on the allow-list, or an address of the host or its network. Work with what is allowed, or ask the user to allow the domain (--allow-domain HOST, or [network] allow = [\"HOST\"] in their config)."
	case strings.Contains(text, "is not on the network allow-list"):
		return "The network is allow-listed: commands reach only the listed domains, through shellgate's proxy, which refused the domain named above. Work with what is allowed, or ask the user to allow the domain (--allow-domain HOST, or [network] allow = [\"HOST\"] in their config)."
	case strings.Contains(text, "Network is unreachable") || strings.Contains(text, "Could not resolve host") ||
		strings.Contains(text, "Temporary failure in name resolution") || strings.Contains(text, "getaddrinfo") || strings.Contains(text, "ENOTFOUND"):
		return "The network is allow-listed: there is no DNS and no route out of the sandbox; clients reach the allowed domains only through shellgate's proxy, which HTTPS_PROXY, HTTP_PROXY and ALL_PROXY name. Use a client that honours them (curl, npm, pip, go, cargo, git over HTTPS do)."
	}
	return Sandbox(d, false, hostPorts...)
}

// missingPath finds the path a "no such file" message names: after a
// program's name ("cat: /x: No such file…"), or quoted (Python's "…: '/x'").
var missingPath = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[\s'"(])(/[^\s'":]+)['"]?(?::|\s)[^\n]*(?:No such file|not found)|(?:No such file or directory|ENOENT)[^\n]*?['"](/[^'"\n]+)['"]`)
})

// shellPrefix is how a shell begins its own error lines: "/usr/bin/bash: line 1: ",
// "sh: 1: ". The shell's path there is not what was missing.
var shellPrefix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^(?:\S*/)?(?:ba|da|k|z)?sh: (?:line )?\d+: `)
})

// Unseen explains a "no such file" for a path that exists on the host but
// outside the sandbox's view (the view shows the project, the system and the
// toolchains; see sandbox.Plan), and how the user shows it. A credential (in
// or under one of secrets(), asked only for such a path) is never offered for
// showing: the model is told to work without it, not to ask for a setting
// that would hand it to every command.
func Unseen(d *envelope.Data, root string, secrets func() []string) string {
	if d.ExitCode != nil && *d.ExitCode == 0 {
		return ""
	}
	text := shellPrefix().ReplaceAllString(d.Stderr+"\n"+d.Stdout, "")
	for _, m := range missingPath().FindAllStringSubmatch(text, 8) {
		p := m[1] + m[2]
		if strings.HasPrefix(p, root+"/") || p == root {
			continue
		}
		if _, err := os.Lstat(p); err != nil {
			continue
		}
		for _, s := range secrets() {
			if p == s || strings.HasPrefix(p, s+"/") {
				return fmt.Sprintf("%s holds credentials: the sandbox never shows them to commands. Work without it, or leave this step to the user.", p)
			}
		}
		return fmt.Sprintf("%s exists on this machine, but the sandbox shows commands only the project, the system and the toolchains. The user can show it with [sandbox] visible = [%q] in their configuration, or run with --sandbox off.", p, p)
	}
	return ""
}

const networkOn = "The user can turn the network on with --allow-network, BASH_ALLOW_NETWORK=true or [policy] network = true."

// refusedMarks are what clients print when nothing listens on a port: bash,
// Python, psql and nc ("Connection refused"), Go ("connection refused"), Node
// (ECONNREFUSED), curl.
var refusedMarks = []string{"Connection refused", "connection refused", "ECONNREFUSED", "Couldn't connect to server", "Failed to connect to"}

// localPorts find the port of a refused connection to the loopback in a
// client's message, each capturing it: Node and Go ("127.0.0.1:3000",
// "::1:3000"), wget ("|127.0.0.1|:3000"), bash ("/dev/tcp/localhost/3000"),
// then curl, nc, psql and Python ("localhost port 3000", "… port=3000").
// They are compiled on first use, not at every start of the program.
var localPorts = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?:^|[^\w:.])(?:localhost|127\.0\.0\.1|\[?::1\]?)\|?:(\d{1,5})\b`),
		regexp.MustCompile(`/dev/tcp/(?:localhost|127\.0\.0\.1|::1)/(\d{1,5})\b`),
		regexp.MustCompile(`(?:^|[^\w:.])(?:localhost|127\.0\.0\.1|::1)\b.*?\bport[ =](\d{1,5})\b`),
	}
})

// refusedPort is the loopback port a refused connection in text was made to,
// read from the lines that say so, else from a local address anywhere (a
// traceback's source line); 0 when none is named.
func refusedPort(text string) int {
	port := func(re *regexp.Regexp, s string) int {
		if m := re.FindStringSubmatch(s); m != nil {
			if p, err := strconv.Atoi(m[1]); err == nil && p > 0 && p <= 65535 {
				return p
			}
		}
		return 0
	}
	for _, line := range strings.Split(text, "\n") {
		refused := false
		for _, m := range refusedMarks {
			refused = refused || strings.Contains(line, m)
		}
		for _, re := range localPorts() {
			if p := port(re, line); refused && p > 0 {
				return p
			}
		}
	}
	return port(localPorts()[0], text)
}

// localPortHint explains a refused connection with the network off: the
// session's loopback is its own, and a server of the host is reached through a
// forwarded port.
func localPortHint(port int, hostPorts []int) string {
	if port > 0 && slices.Contains(hostPorts, port) {
		return fmt.Sprintf("Port %d is forwarded to the host's loopback ([sandbox] host_ports), but nothing answered there: the server on the host is not running, or listens elsewhere.", port)
	}
	p, nothing, at := "PORT", "", ""
	if port > 0 {
		p = strconv.Itoa(port)
		nothing, at = "Nothing answered on port "+p+" in this session. ", " on port "+p
	}
	return nothing + "The sandbox gives the session a loopback of its own: servers started by this session's commands answer on localhost, the host's do not, even on the host's localhost. " +
		"To reach a server running on the host" + at + ", the user forwards its port into the session: [sandbox] host_ports = [" + p + "] in the configuration, or --host-port " + p + ". " + networkOn
}

func joinPorts(ports []int) string {
	s := make([]string, len(ports))
	for i, p := range ports {
		s[i] = strconv.Itoa(p)
	}
	return strings.Join(s, ", ")
}
