package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate/envelope"
)

// --host-port forwards a host port into the sandbox; a bad one is a usage error.
func TestRunHostPort(t *testing.T) {
	lane.Live(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "host server")
	}))
	defer web.Close()
	port := strconv.Itoa(web.Listener.Addr().(*net.TCPAddr).Port)
	code, stdout, stderr := runCLI(t, "--json", "--host-port", port, "--host-port", port, "--", "curl -sS --max-time 5 http://127.0.0.1:"+port+"/")
	var env envelope.Envelope
	if err := json.Unmarshal([]byte(stdout), &env); err != nil {
		t.Fatalf("not an envelope (%v): %s %s", err, stdout, stderr)
	}
	if sb, _ := env.Context.Sandbox.(map[string]any); sb["net"] != "netns" {
		t.Skipf("no network namespace here: %v", env.Context.Sandbox)
	} else if sb["host_ports"] != port {
		t.Errorf("context.sandbox %v, want host_ports %s", sb, port)
	}
	if code != 0 || env.Data.Stdout != "host server" {
		t.Errorf("exit %d, stdout %q\n%s", code, env.Data.Stdout, env.Text)
	}

	for _, bad := range []string{"0", "65536", "http"} {
		code, _, stderr := runCLI(t, "--host-port", bad, "--", "true")
		if code != exitUsage || !strings.Contains(stderr, "-host-port") || !strings.Contains(stderr, "want a TCP port") {
			t.Errorf("--host-port %s: exit %d, stderr %q", bad, code, stderr)
		}
	}
}
