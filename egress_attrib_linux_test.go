package shellgate

import (
	"context"
	"testing"
)

// Where the process that connects is not found (it holds no descriptor of
// the connection when the proxy looks: one in flight over a unix socket, to
// be received back once let through), only answers given to questions where
// it was not found either count: those named every command that may be
// connecting (Question.Others). An "allow once" given to one command, found
// as the one connecting, is that command's alone; before, any unfound
// connection rode on it while the command ran.
func TestEgressUnfoundConnectionAsksAnew(t *testing.T) {
	for _, c := range []struct {
		name      string
		found     bool // the first answer was to a question whose process was found
		wantAsked int
	}{
		{"after an answer for the command found connecting", true, 1},
		{"after an answer where no process was found", false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := &Gate{cfg: Config{Network: NetworkConfig{Allow: []string{"registry.npmjs.org"}}}, box: &box{wanted: true}}
			asked := 0
			approve := func(context.Context, Question) Answer { asked++; return Deny }
			var a admitted
			ended := g.egressCall(g.box, &a, runOptions{approver: approve}, "curl https://x.example/", "")
			defer ended()
			a.started(100)
			call := g.box.egress.running[0]
			if c.found {
				call.answered["x.example"] = true // as askEgress records "allow once" for it
			} else {
				call.shared["x.example"] = true
			}
			err := g.askEgress(context.Background(), g.box, "x.example", 443)
			if asked != c.wantAsked {
				t.Errorf("asked %d times, want %d (err %v)", asked, c.wantAsked, err)
			}
			if (err == nil) != (c.wantAsked == 0) {
				t.Errorf("err %v: want the connection let through only on the earlier answer", err)
			}
		})
	}
}
