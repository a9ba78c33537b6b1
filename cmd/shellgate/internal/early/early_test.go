package early

import "testing"

func TestWanted(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		network string
		want    bool
	}{
		{[]string{"shellgate", "run", "--", "echo hi"}, "", true},
		{[]string{"/usr/local/bin/shellgate", "run", "--json", "--root", "/p", "--", "echo hi"}, "", true},
		{[]string{"shellgate", "exec", "make test"}, "", true},
		{[]string{"/home/u/bin/shellgate-exec", "make test"}, "", true},
		{[]string{"shellgate", "run", "--sandbox", "on", "--", "ls"}, "", true},
		{[]string{"shellgate", "run", "--", "echo off"}, "", true}, // the command's words are not flags
		{[]string{"shellgate", "run", "--sandbox", "off", "--", "ls"}, "", false},
		{[]string{"shellgate", "run", "-sandbox=off", "--", "ls"}, "", false},
		{[]string{"shellgate", "run", "--profile=full-access", "--", "ls"}, "", false},
		{[]string{"shellgate", "run", "--allow-network", "--", "curl x"}, "", false},
		{[]string{"shellgate", "run", "--", "curl x"}, "true", false},
		{[]string{"shellgate", "run", "-h"}, "", false},
		{[]string{"shellgate", "check", "--", "ls"}, "", false},
		{[]string{"shellgate", "mcp"}, "", false},
		{[]string{"shellgate", "hook", "claude-code"}, "", false},
		{[]string{"shellgate"}, "", false},
		{[]string{"shellgate-sandbox-session"}, "", false},
		{nil, "", false},
	} {
		if got := Wanted(tc.args, tc.network); got != tc.want {
			t.Errorf("Wanted(%q, BASH_ALLOW_NETWORK=%q) = %v, want %v", tc.args, tc.network, got, tc.want)
		}
	}
}
