package policy_test

import (
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// A line is judged once; its verdict follows what contains it, as that
// becomes known: the sandbox (code the parser cannot see, loopback, egress)
// and checkpoints (lose-work), each dropping only its own rules' hits.
func TestJudgementCovers(t *testing.T) {
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	env := policy.Env{Root: "/work/p", Home: "/home/u"}
	all := policy.Covers{Sandbox: true, PrivateLoopback: true, Egress: true, Checkpoint: true}
	for _, c := range []struct {
		command string
		rule    string        // without covers
		freeBy  policy.Covers // the least that allows it
	}{
		{`eval "$X"`, policy.RuleStoredCode, policy.Covers{Sandbox: true}},
		{`curl -s http://localhost:3000/health`, policy.RuleNetwork, policy.Covers{PrivateLoopback: true}},
		{`curl -s https://example.com`, policy.RuleNetwork, policy.Covers{Egress: true}},
		{`git reset --hard`, policy.RuleLoseWork, policy.Covers{Checkpoint: true}},
		{`rm -rf /`, policy.RuleCatastrophic, policy.Covers{}}, // nothing covers it
	} {
		j := e.Judge(c.command, env)
		if v := j.Verdict(policy.Covers{}, nil); v.Decision == policy.Allow || v.Rule != c.rule {
			t.Errorf("%s without covers: %s %s, want rule %s", c.command, v.Decision, v.Rule, c.rule)
		}
		want := policy.Allow
		if c.freeBy == (policy.Covers{}) {
			want = policy.Deny
		}
		if v := j.Verdict(all, nil); v.Decision != want {
			t.Errorf("%s with every cover: %s %s", c.command, v.Decision, v.Rule)
		}
		if c.freeBy != (policy.Covers{}) {
			if v := j.Verdict(c.freeBy, nil); v.Decision != policy.Allow {
				t.Errorf("%s with %+v: %s %s", c.command, c.freeBy, v.Decision, v.Rule)
			}
			// Every other cover alone leaves it asked or denied.
			for _, other := range []policy.Covers{{Sandbox: true}, {PrivateLoopback: true}, {Egress: true}, {Checkpoint: true}} {
				if other == c.freeBy || c.freeBy == (policy.Covers{PrivateLoopback: true}) && other.Egress {
					continue // egress decides per domain, loopback included
				}
				if v := j.Verdict(other, nil); v.Decision == policy.Allow {
					t.Errorf("%s allowed by %+v", c.command, other)
				}
			}
		}
	}
}

// Deleting the whole root throws work away (rule lose-work, as a user reads
// it: it was protected-paths, whose rule is about files that run later), and
// no cover makes it moot: a checkpoint leaves out the ignored files it
// deletes, and the sandbox lets it write the root.
func TestJudgementRmRoot(t *testing.T) {
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	env := policy.Env{Root: "/work/p", Home: "/home/u", Dir: "/work/p"}
	all := policy.Covers{Sandbox: true, PrivateLoopback: true, Egress: true, Checkpoint: true}
	for _, command := range []string{"rm -rf .", "rm -rf /work/p", "cd /work/p && rm -fr ./"} {
		j := e.Judge(command, env)
		for _, c := range []policy.Covers{{}, all} {
			if v := j.Verdict(c, nil); v.Decision != policy.Ask || v.Rule != policy.RuleLoseWork {
				t.Errorf("%s with %+v: %s %s, want ask lose-work", command, c, v.Decision, v.Rule)
			}
		}
	}
}

// In untrusted mode a command no rule speaks about is asked about (rule
// untrusted); one whose only hit the sandbox covers is asked about too,
// rather than allowed unseen.
func TestJudgementUntrustedFallback(t *testing.T) {
	e, err := policy.New(policy.Settings{Mode: policy.ModeUntrusted})
	if err != nil {
		t.Fatal(err)
	}
	env := policy.Env{Root: "/work/p", Home: "/home/u"}
	sandbox := policy.Covers{Sandbox: true}
	for command, want := range map[string]string{
		`eval "$X"`:  policy.RuleUntrusted,
		`make build`: policy.RuleUntrusted,
	} {
		if v := e.Judge(command, env).Verdict(sandbox, nil); v.Decision != policy.Ask || v.Rule != want {
			t.Errorf("%s: %s %s, want ask %s", command, v.Decision, v.Rule, want)
		}
	}
	if v := e.Judge("curl https://x.test", env).Verdict(sandbox, nil); v.Decision != policy.Deny || v.Rule != policy.RuleNetwork {
		t.Errorf("curl: %s %s, want the network rule's deny", v.Decision, v.Rule)
	}
	if v := e.Judge("ls", env).Verdict(sandbox, nil); v.Decision != policy.Allow {
		t.Errorf("ls: %s %s", v.Decision, v.Rule)
	}
}

// Unasked leaves out an ask's "the user must approve it" in both its forms,
// and only that.
func TestUnasked(t *testing.T) {
	for reason, want := range map[string]string{
		"`docker run x` hands work to docker (rule sandbox-escape): the user must approve it.":                               "`docker run x` hands work to docker (rule sandbox-escape).",
		"`x`: x -e runs another program (rule code-execution): the user must approve it. Run that program directly instead.": "`x`: x -e runs another program (rule code-execution). Run that program directly instead.",
		"`python3 -c x`: python3 -c runs a program (rule code-execution). The user must approve it.":                         "`python3 -c x`: python3 -c runs a program (rule code-execution).",
		"`sudo ls` would run with elevated privileges (rule privilege).":                                                     "`sudo ls` would run with elevated privileges (rule privilege).",
	} {
		if got := (policy.Verdict{Decision: policy.Ask, Reason: reason}).Unasked(); got != want {
			t.Errorf("Unasked(%q) = %q, want %q", reason, got, want)
		}
	}
}

// With the network allow-listed (Covers.Egress), the proxy lets a registry's
// domain through for a download and for an upload alike: a command that
// sends the project or the account's data to the registry is asked about
// there; with the network off it is denied as before, and a fetch is
// allowed through the proxy.
func TestRegistryUploadsAskedWithEgress(t *testing.T) {
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	env := policy.Env{Root: "/work/p", Home: "/home/u"}
	egress := policy.Covers{Sandbox: true, PrivateLoopback: true, Egress: true}
	for _, c := range []string{"npm publish", "npm publish --access public", "pnpm publish --no-git-checks", "yarn publish",
		"yarn npm publish", "bun publish", "cargo publish", "twine upload dist/x.whl", "gem push x.gem", "poetry publish",
		"uv publish", "npm token create", "npm dist-tag add x@1 latest", "npm unpublish x@1", "npx npm publish"} {
		j := e.Judge(c, env)
		if v := j.Verdict(egress, nil); v.Decision != policy.Ask || v.Rule != policy.RuleNetwork {
			t.Errorf("%s with egress: %s %s, want ask (network)", c, v.Decision, v.Rule)
		}
		if v := j.Verdict(policy.Covers{Sandbox: true, PrivateLoopback: true}, nil); v.Decision != policy.Deny || v.Rule != policy.RuleNetwork {
			t.Errorf("%s with the network off: %s %s, want deny (network)", c, v.Decision, v.Rule)
		}
	}
	for _, c := range []string{"npm install", "npm ci", "pnpm install", "cargo build", "npm view left-pad", "npm publish -h", "twine check dist/x.whl"} {
		if v := e.Judge(c, env).Verdict(egress, nil); v.Decision != policy.Allow {
			t.Errorf("%s with egress: %s %s: %s", c, v.Decision, v.Rule, v.Reason)
		}
	}
}
