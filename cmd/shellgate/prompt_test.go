package main

import (
	"context"
	"strings"
	"testing"

	"github.com/shellgate/shellgate"
)

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
	if strings.ContainsAny(got, "\r\x1b") || !strings.Contains(got, `rm -rf ~\r\e[2Kgit status`) || !strings.Contains(got, "covers") {
		t.Errorf("prompt: %q", got)
	}
}
