package shellgate_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/shellgate/shellgate/internal/lane"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/config"
	"github.com/shellgate/shellgate/envelope"
	"github.com/shellgate/shellgate/policy"
)

// A line with several commands the policy asks about has each asked about, not
// only the first: the others used to ride on its approval.
func TestApprovalAsksEveryRule(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	cfg := shellgate.Config{Root: l.root}
	cfg.Policy.Ask = []string{"touch *", "mkdir *"}
	g := gate(t, cfg)
	var asked []string
	answer := func(deny string) shellgate.Option {
		asked = nil
		return shellgate.WithApprover(func(_ context.Context, q shellgate.Question) shellgate.Answer {
			asked = append(asked, q.SessionKey)
			if q.SessionKey == deny {
				return shellgate.Deny
			}
			return shellgate.AllowOnce
		})
	}
	env := run(t, g, shellgate.Request{Command: "touch a && mkdir b"}, answer(""))
	if len(asked) != 2 || asked[0] != "touch *" || asked[1] != "mkdir *" {
		t.Errorf("asked %q, want touch * then mkdir *", asked)
	}
	if env.Error != nil || env.Context.Policy == nil || env.Context.Policy.Approved != "once" {
		t.Errorf("both approved: %s", env.Text)
	}
	env = run(t, g, shellgate.Request{Command: "touch c && mkdir d"}, answer("mkdir *"))
	if env.Error == nil || env.Error.Code != "APPROVAL_REQUIRED" || env.Error.Rule == "" {
		t.Errorf("second denied: %s", env.Text)
	}
	if _, err := os.Stat(filepath.Join(l.root, "c")); err == nil {
		t.Error("the line ran although its second command was denied")
	}
	// "Allow for this session" of one is remembered; the other is still asked.
	var session shellgate.SessionApprovals
	n := 0
	always := shellgate.WithApprover(session.Wrap(func(_ context.Context, q shellgate.Question) shellgate.Answer {
		n++
		return shellgate.AllowSession
	}))
	run(t, g, shellgate.Request{Command: "touch e && mkdir f"}, always)
	run(t, g, shellgate.Request{Command: "touch g && mkdir h"}, always)
	if n != 2 {
		t.Errorf("asked %d times for two keys approved for the session, want 2", n)
	}
}

// A command too long to be shown whole is not asked about (a question with its
// middle cut asks the user to approve what they cannot see): it is refused.
func TestApprovalRefusesWhatCannotBeShown(t *testing.T) {
	lane.Live(t)
	l := newLab(t)
	cfg := shellgate.Config{Root: l.root}
	cfg.Policy.Ask = []string{"touch *"}
	g := gate(t, cfg)
	asked := 0
	approve := shellgate.WithApprover(func(context.Context, shellgate.Question) shellgate.Answer { asked++; return shellgate.AllowOnce })
	for _, cmd := range []string{
		"touch " + strings.Repeat("a", 100) + strings.Repeat(" b", 10<<10),
		"touch a" + strings.Repeat(" \\\n b", 500),
	} {
		env := run(t, g, shellgate.Request{Command: cmd}, approve)
		if asked != 0 || env.Error == nil || env.Error.Code != "APPROVAL_REQUIRED" || !strings.Contains(env.Error.Message, "too long to show") {
			t.Errorf("asked %d times; %s", asked, envelope.CutMiddle(env.Text, 400))
		}
	}
	if env := run(t, g, shellgate.Request{Command: "touch short"}, approve); asked != 1 || env.Error != nil {
		t.Errorf("a short command: asked %d times; %s", asked, env.Text)
	}
}

// A command no one could approve says which file's [policy] allow would run
// it: the user file where shellgate reads it (config.Load, as the CLI and the
// MCP server configure a Gate), not ~/.config/shellgate/config.toml whatever
// the system ($XDG_CONFIG_HOME on Linux; on macOS the file is under
// ~/Library/Application Support).
func TestApprovalNamesTheUserFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("XDG_CONFIG_HOME moves the user file on Linux")
	}
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	l := newLab(t)
	cfg, _, err := config.Load(config.LoadOptions{Root: l.root})
	if err != nil {
		t.Fatal(err)
	}
	g := gate(t, cfg)
	env := g.Run(context.Background(), shellgate.Request{Command: "docker run alpine true"})
	want := `[policy] allow = ["docker run alpine true"] to ` + filepath.Join(xdg, "shellgate", "config.toml") + ","
	if env.Error == nil || env.Error.Code != envelope.ApprovalRequired || !strings.Contains(env.Error.Message, want) {
		t.Errorf("error %+v, want one naming %s", env.Error, want)
	}
}

// With no one to ask, the refusal says where to allow the command: in the
// configuration file the user's settings come from (Config.PolicyFile, which
// config.Load sets), and where no file is read (shellgate.Run, a Config built
// in code) in the allow patterns, not a file that nothing reads.
func TestApprovalRequiredNamesWhereToAllow(t *testing.T) {
	l := newLab(t)
	file := filepath.Join(l.outside, "config.toml")
	for _, tc := range []struct {
		policyFile    string
		want, notWant string
	}{
		{"", `add "docker run alpine true" to shellgate's allow patterns (Config.Policy.Allow`, "config.toml"},
		{file, `add [policy] allow = ["docker run alpine true"] to ` + file, "Config.Policy"},
	} {
		g := gate(t, shellgate.Config{Root: l.root, PolicyFile: tc.policyFile})
		env := run(t, g, shellgate.Request{Command: "docker run alpine true"})
		if env.Error == nil || env.Error.Code != envelope.ApprovalRequired || !strings.Contains(env.Error.Message, tc.want) || strings.Contains(env.Error.Message, tc.notWant) {
			t.Errorf("PolicyFile %q: %s", tc.policyFile, env.Text)
		}
	}
}

// The allow pattern a refusal names is TOML the user can paste into the file
// it names: pasted, it lets the command run without asking, control
// characters and all, and it is TOML 1.0 too (an editor's checker reads
// that): Go's %q wrote \x1b, which only TOML 1.1 reads (go-toml/v2 does), and
// \xff for a byte no TOML string can hold (TOML reads it as ÿ): a word that
// is not UTF-8 gets no advice.
func TestAllowAdviceIsTOML(t *testing.T) {
	l := newLab(t)
	file := filepath.Join(l.outside, "config.toml")
	load := func() *shellgate.Gate {
		cfg, _, err := config.Load(config.LoadOptions{Root: l.root, UserConfig: file})
		if err != nil {
			t.Fatal(err)
		}
		return gate(t, cfg)
	}
	advice := regexp.MustCompile(`add (\[policy\] allow = \[.*\]) to ` + regexp.QuoteMeta(file) + `,`)
	for _, command := range []string{
		"docker run alpine true",
		`docker run alpine $'\e[31m'`,
		`docker run alpine $'a\x7fb\x01'`,
		`docker run alpine $'tab\there' "it's \"quoted\"" 'back\slash'`,
		`docker run alpine $'\xff'`,
	} {
		t.Run(command, func(t *testing.T) {
			os.Remove(file)
			env := run(t, load(), shellgate.Request{Command: command})
			if env.Error == nil || env.Error.Code != envelope.ApprovalRequired {
				t.Fatalf("not asked: %s", env.Text)
			}
			m := advice.FindStringSubmatch(env.Error.Message)
			if strings.Contains(command, `\xff`) {
				// $'\xff' is the very byte: no TOML string can say it.
				if m != nil {
					t.Errorf("advice for a word that is not UTF-8: %s", m[1])
				}
				return
			}
			if m == nil {
				t.Fatalf("no advice naming %s: %s", file, env.Error.Message)
			}
			if strings.Contains(m[1], `\x`) {
				t.Errorf("%s: \\x is TOML 1.1 only", m[1])
			}
			if err := os.WriteFile(file, []byte("[policy]\n"+strings.TrimPrefix(m[1], "[policy] ")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if v := load().Check(shellgate.Request{Command: command}); v.Decision != policy.Allow {
				t.Errorf("with %s pasted: %s (%s)", m[1], v.Decision, v.Reason)
			}
		})
	}
}
