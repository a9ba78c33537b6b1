package hint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/envelope"
)

// With the network off, a refused connection to a local port is explained: the
// session's loopback is its own, and a host server is reached through
// host_ports, named with the port the client printed.
func TestSandboxHintLocalPort(t *testing.T) {
	for _, c := range []struct {
		name, stderr string
		network      bool
		hostPorts    []int
		want         []string // in the hint; none: no hint
		not          []string
	}{
		{name: "curl", stderr: "curl: (7) Failed to connect to localhost port 3000 after 0 ms: Couldn't connect to server",
			want: []string{"Nothing answered on port 3000", "[sandbox] host_ports = [3000]", "--host-port 3000", "loopback of its own"}},
		{name: "curl by address", stderr: "curl: (7) Failed to connect to 127.0.0.1 port 5173 after 0 ms: Couldn't connect to server",
			want: []string{"host_ports = [5173]", "--host-port 5173"}},
		{name: "wget", stderr: "Resolving localhost (localhost)... 127.0.0.1\nConnecting to localhost (localhost)|127.0.0.1|:8080... failed: Connection refused.",
			want: []string{"host_ports = [8080]"}},
		{name: "node", stderr: "Error: connect ECONNREFUSED 127.0.0.1:3000\n    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)",
			want: []string{"host_ports = [3000]"}},
		{name: "node over ::1", stderr: "Error: connect ECONNREFUSED ::1:4200", want: []string{"host_ports = [4200]"}},
		{name: "go", stderr: "dial tcp 127.0.0.1:6379: connect: connection refused", want: []string{"host_ports = [6379]"}},
		{name: "bash", stderr: "bash: connect: Connection refused\nbash: line 1: /dev/tcp/localhost/9000: Connection refused",
			want: []string{"host_ports = [9000]"}},
		{name: "psql", stderr: "psql: error: connection to server at \"localhost\" (127.0.0.1), port 5432 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?",
			want: []string{"host_ports = [5432]", "--host-port 5432"}},
		{name: "python requests", stderr: "requests.exceptions.ConnectionError: HTTPConnectionPool(host='localhost', port=8000): Max retries exceeded with url: / (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f>: Failed to establish a new connection: [Errno 111] Connection refused'))",
			want: []string{"host_ports = [8000]"}},
		{name: "python traceback", stderr: "  File \"/p/check.py\", line 2, in <module>\n    urlopen(\"http://localhost:8001/health\")\nurllib.error.URLError: <urlopen error [Errno 111] Connection refused>",
			want: []string{"host_ports = [8001]"}},
		{name: "no port named", stderr: "ConnectionRefusedError: [Errno 111] Connection refused",
			want: []string{"host_ports = [PORT]", "--host-port PORT"}, not: []string{"Nothing answered on port"}},
		{name: "a remote port is not the loopback's", stderr: "curl: (7) Failed to connect to 10.0.0.5 port 443 after 0 ms: Couldn't connect to server",
			want: []string{"host_ports = [PORT]"}, not: []string{"443"}},
		{name: "forwarded, nothing on the host", stderr: "curl: (7) Failed to connect to localhost port 3000 after 0 ms: Couldn't connect to server", hostPorts: []int{3000},
			want: []string{"Port 3000 is forwarded", "not running"}, not: []string{"--host-port"}},
		{name: "another port than the forwarded one", stderr: "dial tcp 127.0.0.1:5432: connect: connection refused", hostPorts: []int{3000},
			want: []string{"host_ports = [5432]"}},
		{name: "forwarded, reset", stderr: "curl: (56) Recv failure: Connection reset by peer", hostPorts: []int{3000, 5432},
			want: []string{"forwarded to the host (3000, 5432)"}},
		{name: "reset without forwarding", stderr: "curl: (56) Recv failure: Connection reset by peer"},
		{name: "network on", stderr: "curl: (7) Failed to connect to localhost port 3000 after 0 ms: Couldn't connect to server", network: true},
		{name: "no network", stderr: "curl: (6) Could not resolve host: example.com", want: []string{"no network but a loopback", "--allow-network"}, not: []string{"host_ports"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			one := 1
			got := Sandbox(&envelope.Data{Stderr: c.stderr, ExitCode: &one}, c.network, c.hostPorts...)
			if len(c.want) == 0 && got != "" {
				t.Errorf("hint %q, want none", got)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("hint lacks %q:\n%s", w, got)
				}
			}
			for _, n := range c.not {
				if strings.Contains(got, n) {
					t.Errorf("hint has %q:\n%s", n, got)
				}
			}
		})
	}
}

// A write the sandbox refused names what to do instead, for .git/config (git
// -c), a submodule's config, another protected path, and a path outside the root.
func TestSandboxHintReadOnly(t *testing.T) {
	for _, c := range []struct{ stderr, want string }{
		{"error: could not write config file .git/config: Device or resource busy", "git -c user.name=NAME"},
		{"error: could not lock config file .git/config: Read-only file system", "GIT_AUTHOR_EMAIL"},
		{"bash: .git/hooks/pre-commit: Read-only file system", "protected paths read-only"},
		{"error: could not write config file /p/.git/modules/libs/lib/config: Device or resource busy", "checkout --detach $(git rev-parse HEAD:PATH)"},
		{"error: could not lock config file .git/worktrees/w/config.worktree: Read-only file system", "config of a submodule or worktree"},
		{"error: could not lock config file /p/.git/modules/libs/lib/config: Operation not permitted", "checkout --detach $(git rev-parse HEAD:PATH)"},
		{"error: could not lock config file /p/libs/lib/.git/config: Operation not permitted", "git -c user.name=NAME"},
		{"mv: cannot move 'x' to '.envrc': Device or resource busy", "protected paths read-only"},
		{"fatal: Unable to create '/w/main/.git/packed-refs.lock': Read-only file system", "for the user to run outside the sandbox"},
		{"touch: cannot touch '/etc/x': Read-only file system", "outside the project root"},
		{"Error: EROFS: read-only file system, open '/etc/x'", "outside the project root"},
		{"open /etc/x: read-only file system", "outside the project root"},
		{"Error: EBUSY: resource busy or locked, rename 'x' -> '.vscode'", "protected paths read-only"},
		{"Error: EACCES: permission denied, open '/home/u/x'", "the sandbox refused it"},
		{"dial unix /srv/app.sock: connect: permission denied", "unix socket this session did not bind"},
		{"PermissionError: [Errno 13] Permission denied", "or a connection to a unix socket this session did not bind, the sandbox refused it"},
		{"Error: connect EACCES /var/tmp/pg/.s.PGSQL.5432", "unix socket this session did not bind"},
		{"  File \"<string>\", line 1, in <module>\n    s.connect(\"/run/x.sock\")\nPermissionError: [Errno 13] Permission denied", "unix socket this session did not bind"},
		{"open /home/u/x: permission denied", "the sandbox refused it"},
		{"PermissionError: [Errno 1] Operation not permitted: '__pycache__/util.cpython-311.pyc'", "refuses Python bytecode"},
		{"mv: cannot move 'x.tmp' to '__pycache__/util.cpython-311.pyc': Operation not permitted", "refuses Python bytecode"},
		{"PermissionError: [Errno 13] Permission denied: '/home/u/x.pyc'", "the sandbox refused it"},
	} {
		one := 1
		if got := Sandbox(&envelope.Data{Stderr: c.stderr, ExitCode: &one}, false); !strings.Contains(got, c.want) {
			t.Errorf("%s: hint %q lacks %q", c.stderr, got, c.want)
		}
	}
	one := 1
	if got := Sandbox(&envelope.Data{Stderr: "umount: /mnt: target is busy (Device or resource busy)", ExitCode: &one}, false); got != "" {
		t.Errorf("an EBUSY of no protected path got a hint: %q", got)
	}
}

// A path outside the view that the host has is explained; one the host lacks
// too, or one in the root, is an ordinary failure.
func TestUnseenHint(t *testing.T) {
	one := 1
	dir := t.TempDir()
	there := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(there, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(dir, ".ssh", "id_ed25519")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := []string{filepath.Join(dir, ".ssh"), filepath.Join(dir, ".netrc")}
	shell := filepath.Join(dir, "bash") // the shell's path, which exists, begins its errors
	if err := os.WriteFile(shell, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		stderr, root string
		want         string // the start of the hint; "" for none
	}{
		{"cat: " + there + ": No such file or directory\n", "/work/proj", there + " exists on this machine"},
		{"FileNotFoundError: [Errno 2] No such file or directory: '" + there + "'\n", "/work/proj", there + " exists on this machine"},
		{"bash: " + there + ": No such file or directory\n", dir, ""},
		{"cat: /nonexistent/x: No such file or directory\n", "/work/proj", ""},
		// The shell that says a command is missing is not what was missing.
		{shell + ": line 1: nosuchtool: command not found\n", "/work/proj", ""},
		{shell + ": line 1: " + there + ": No such file or directory\n", "/work/proj", there + " exists on this machine"},
		{shell + ": 1: " + there + ": not found\n", "/work/proj", there + " exists on this machine"},
		// A credential is never offered for showing.
		{"cat: " + key + ": No such file or directory\n", "/work/proj", key + " holds credentials"},
		{"ls: cannot access '" + filepath.Dir(key) + "': No such file or directory\n", "/work/proj", filepath.Dir(key) + " holds credentials"},
	} {
		got := Unseen(&envelope.Data{Stderr: c.stderr, ExitCode: &one}, c.root, func() []string { return secrets })
		if !strings.HasPrefix(got, c.want) || (got == "") != (c.want == "") || strings.Contains(got, "credentials") && strings.Contains(got, "visible") {
			t.Errorf("%q (root %s): %q", c.stderr, c.root, got)
		}
	}
}

// With the network allow-listed, a failure names what the proxy refused while
// the command ran, or says that only the proxy leads out; a command that
// succeeded gets no hint.
func TestEgressHint(t *testing.T) {
	zero, one := 0, 1
	for _, c := range []struct {
		name, stderr string
		exit         *int
		refused      []string
		want         string // in the hint; "": no hint
	}{
		{name: "refused by the proxy", stderr: "curl: (56) CONNECT tunnel failed, response 403", exit: &one,
			refused: []string{"evil.example:443", "10.0.0.1:80"}, want: "proxy refused evil.example:443, 10.0.0.1:80 while this command ran"},
		{name: "the proxy's own message", stderr: "evil.example is not on the network allow-list", exit: &one,
			refused: []string{"evil.example:443"}, want: "refused the domain named above"},
		{name: "a client that ignores the proxy", stderr: "curl: (6) Could not resolve host: example.com", exit: &one,
			want: "no DNS and no route out of the sandbox"},
		{name: "node without the proxy", stderr: "Error: getaddrinfo ENOTFOUND registry.example", exit: &one,
			want: "HTTPS_PROXY, HTTP_PROXY and ALL_PROXY"},
		{name: "a sandbox failure", stderr: "touch: cannot touch '/etc/x': Read-only file system", exit: &one,
			want: "outside the project root"},
		{name: "a refused local port", stderr: "dial tcp 127.0.0.1:6379: connect: connection refused", exit: &one,
			want: "host_ports = [6379]"},
		{name: "succeeded", stderr: "curl: (6) Could not resolve host: example.com", exit: &zero, refused: []string{"x:443"}},
		{name: "nothing to explain", stderr: "make: *** [all] Error 2", exit: &one},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Egress(&envelope.Data{Stderr: c.stderr, ExitCode: c.exit}, c.refused)
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("hint %q, want one with %q", got, c.want)
			}
		})
	}
}
