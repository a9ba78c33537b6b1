package shellgate_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/envelope"
)

// A dev server on the host's loopback answers curl in the sandbox when its port
// is in [sandbox] host_ports, and context.sandbox says it is forwarded; without
// it curl fails and the text says how to forward the port.
func TestHostPortsThroughGate(t *testing.T) {
	lane.Live(t)
	requireSandbox(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from the host")
	}))
	defer web.Close()
	port := strconv.Itoa(web.Listener.Addr().(*net.TCPAddr).Port)
	curl := shellgate.Request{Command: "curl -sS --max-time 5 http://localhost:" + port + "/"}

	l := newLab(t)
	forwarding := gate(t, shellgate.Config{Root: l.root, Sandbox: shellgate.SandboxConfig{HostPorts: []int{web.Listener.Addr().(*net.TCPAddr).Port}}})
	env := run(t, forwarding, curl)
	if env.Status != envelope.Success || env.Data.Stdout != "hello from the host" {
		t.Errorf("with host_ports: %s %q\n%s", env.Status, env.Data.Stdout, env.Text)
	}
	if sb, ok := env.Context.Sandbox.(map[string]any); !ok || sb["host_ports"] != port || sb["net"] != "netns" {
		t.Errorf("context.sandbox %v, want host_ports %s and net netns", env.Context.Sandbox, port)
	}

	plain := gate(t, shellgate.Config{Root: newLab(t).root})
	env = run(t, plain, curl)
	if env.Status == envelope.Success {
		t.Fatalf("the host's loopback answered without host_ports: %q", env.Data.Stdout)
	}
	for _, want := range []string{"host_ports = [" + port + "]", "--host-port " + port} {
		if !strings.Contains(env.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, env.Text)
		}
	}
	if sb, _ := env.Context.Sandbox.(map[string]any); sb["host_ports"] != nil {
		t.Errorf("context.sandbox names host ports without any: %v", sb)
	}
}
