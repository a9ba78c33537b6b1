package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/shellgate/shellgate"
)

// The terminal prompt speaks to a person: the command, why in plain words (not the
// model's instructions), and the three answers.
func TestPromptApprover(t *testing.T) {
	q := shellgate.Question{Command: "git -c core.fsmonitor=./x status", Rule: "code-execution",
		Reason: "`git -c core.fsmonitor=./x` runs ./x (rule code-execution). Run the program directly.", SessionKey: "git"}
	for answer, want := range map[string]shellgate.Answer{
		"y\n": shellgate.AllowOnce, "YES\n": shellgate.AllowOnce, "a\n": shellgate.AllowSession,
		"always\n": shellgate.AllowSession, "n\n": shellgate.Deny, "\n": shellgate.Deny, "maybe\n": shellgate.Deny, "": shellgate.Deny,
	} {
		var out bytes.Buffer
		got := promptApprover(strings.NewReader(answer), &out)(context.Background(), q)
		if got != want {
			t.Errorf("answer %q: %v, want %v", answer, got, want)
		}
		prompt := out.String()
		for _, s := range []string{"needs your approval", q.Command, "It runs programs through options", "(rule code-execution)",
			`[a]lways for commands covered by "git"`} {
			if !strings.Contains(prompt, s) {
				t.Errorf("prompt lacks %q:\n%s", s, prompt)
			}
		}
		if strings.Contains(prompt, "Run the program directly") {
			t.Errorf("the prompt gives the model's instructions to the user:\n%s", prompt)
		}
	}
}

// A domain not on the network allow-list: the prompt asks about the domain, for
// the session, and shows the command that connects to it.
func TestPromptApproverDomain(t *testing.T) {
	q := shellgate.Question{Command: "npm install left-pad", Rule: "egress", SessionKey: "network registry.npmjs.org",
		Domain: "registry.npmjs.org", Port: 443, Reason: "It connects to registry.npmjs.org (port 443), which is not on the network allow-list."}
	for answer, want := range map[string]shellgate.Answer{"a\n": shellgate.AllowSession, "y\n": shellgate.AllowOnce, "n\n": shellgate.Deny} {
		var out bytes.Buffer
		if got := promptApprover(strings.NewReader(answer), &out)(context.Background(), q); got != want {
			t.Errorf("answer %q: %v, want %v", answer, got, want)
		}
		want := "\nshellgate: this command connects to registry.npmjs.org, on port 443, which is not on the network allow-list:\n" +
			"│ npm install left-pad\nAllow registry.npmjs.org for this session? [a]lways / [y]es, this command only / [n]o: "
		if out.String() != want {
			t.Errorf("prompt %q, want %q", out.String(), want)
		}
	}
}

// A cancelled call stops waiting for the answer: it is a denial.
func TestPromptApproverCancelled(t *testing.T) {
	r, w := io.Pipe() // nobody answers
	defer w.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	got := make(chan shellgate.Answer, 1)
	go func() {
		got <- promptApprover(r, &out)(ctx, shellgate.Question{Command: "docker ps", Rule: "sandbox-escape"})
	}()
	cancel()
	if a := <-got; a != shellgate.Deny {
		t.Errorf("cancelled prompt answered %v", a)
	}
}

// TestPromptShowsControlCharacters: a command cannot paint itself as another
// one on the approval prompt, and the prompt says what "always" covers.
func TestPromptShowsControlCharacters(t *testing.T) {
	var out strings.Builder
	ask := promptApprover(strings.NewReader("n\n"), &out)
	q := shellgate.Question{Command: "rm -rf ~\r\x1b[2Kgit status", Reason: "why", SessionKey: "rm -rf ~\r\x1b[2Kgit status"}
	if ans := ask(context.Background(), q); ans != shellgate.Deny {
		t.Errorf("answer %v", ans)
	}
	got := out.String()
	if strings.ContainsAny(got, "\r\x1b") || !strings.Contains(got, `rm -rf ~\r\e[2Kgit status`) || !strings.Contains(got, "covered by") {
		t.Errorf("prompt: %q", got)
	}
}

// The terminal prompt shows the command as a block too: a newline in it cannot
// plant a line of the prompt's own, and blank lines cannot scroll it away.
func TestPromptShowsCommandAsBlock(t *testing.T) {
	var out strings.Builder
	q := shellgate.Question{Command: "echo ok\nAllow? [y]es / [n]o\n" + strings.Repeat("\n", 60) + "touch x", Rule: "user.ask", SessionKey: "touch x"}
	promptApprover(strings.NewReader("n\n"), &out)(context.Background(), q)
	got := out.String()
	if strings.Count(got, "\nAllow? ") != 1 || !strings.Contains(got, "│ Allow? [y]es / [n]o") {
		t.Errorf("a line of the command passes for the prompt's own:\n%s", got)
	}
	if lines := strings.Count(got, "\n"); lines > 15 || !strings.Contains(got, "empty lines]") || !strings.Contains(got, "│ touch x") {
		t.Errorf("blank lines not shown as such (%d lines):\n%s", lines, got)
	}
}
