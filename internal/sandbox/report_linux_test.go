package sandbox

import (
	"strings"
	"testing"
)

// The policy drops its asks for code it cannot check only where the session
// contains that code; Uncontained says which layer is missing otherwise, with
// the report's reason, and ignores what is missing of the limits and the
// forwarded ports, which contain nothing.
func TestReportUncontained(t *testing.T) {
	full := func() map[string]string {
		return map[string]string{LayerFS: "landlock-v7", LayerNet: "netns", LayerPID: "pidns", LayerTmp: "private",
			LayerSecrets: "hidden", LayerSeccomp: "filter", LayerProcs: "cgroup", LayerMemory: "4096MiB"}
	}
	without := func(layer string) map[string]string {
		m := full()
		delete(m, layer)
		return m
	}
	noUserNS := "userns: the kernel refuses user namespaces here (EPERM: …), so there is no sandbox session: no fs, net, pid, tmp or secrets layer"
	tests := []struct {
		name string
		r    Report
		want string // a prefix of Uncontained; "" for contained
	}{
		{"every layer", Report{Layers: full()}, ""},
		{"network shared", Report{Layers: func() map[string]string { m := full(); m[LayerNet] = "host"; return m }()}, ""},
		{"limits missing", Report{Layers: without(LayerMemory), Missing: []string{
			"memory: shellgate cannot make a cgroup (…), so the session has no memory limit",
			"procs: shellgate cannot make a cgroup (…), and RLIMIT_NPROC does not bind root",
			"host_ports: port 80: bind: permission denied", "limits: CPU time: …"}}, ""},
		{"no session", Report{Missing: []string{noUserNS}}, "userns: the kernel refuses"},
		{"no Landlock", Report{Layers: without(LayerFS), Missing: []string{"fs: this kernel offers no Landlock (ENOSYS), …"}}, "fs: this kernel offers no Landlock"},
		{"no seccomp", Report{Layers: without(LayerSeccomp), Missing: []string{"seccomp: the kernel takes no seccomp filter (EINVAL), …"}}, "seccomp: the kernel takes"},
		{"no loopback", Report{Layers: without(LayerNet), Missing: []string{"net: operation not permitted"}}, "net: operation not permitted"},
		{"a layer absent without a reason", Report{Layers: without(LayerPID)}, "pid: not applied"},
		{"a step of the view failed", Report{Layers: full(), Missing: []string{"view: bind /home/u/.ssh: permission denied"}}, "view: bind /home/u/.ssh"},
		{"protected paths not bound", Report{Layers: full(), Missing: []string{"protected: too many mounts"}}, "protected: too many mounts"},
		{"capabilities kept", Report{Layers: full(), Missing: []string{"capabilities: bounding set: EPERM"}}, "capabilities: bounding set"},
		{"a session that failed otherwise", Report{Missing: []string{"sandbox: the session helper did not set up within 10s"}}, "sandbox: the session helper"},
	}
	for _, tt := range tests {
		got := tt.r.Uncontained()
		if tt.want == "" && got != "" || !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s: Uncontained() = %q, want %q…", tt.name, got, tt.want)
		}
	}
}
