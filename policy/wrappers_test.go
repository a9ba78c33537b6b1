package policy_test

import "testing"

// TestWrappersLookedThrough pins root cause 5 of issue 10 and the external
// suites' "not looked through" class: every wrapper's command is judged, and
// an unknown program whose arguments look like a command line asks.
func TestWrappersLookedThrough(t *testing.T) {
	checkDefaults(t, nil, []decisionCase{
		{"taskset -c 0 rm -f $OUTSIDE/victim", deny, "confinement"},
		{"taskset 0x1 rm -rf ~", deny, "catastrophic"},
		{"setarch x86_64 rm -f $OUTSIDE/victim", deny, "confinement"},
		{"setarch $(uname -m) -R rm -f $OUTSIDE/victim", deny, "confinement"},
		{"prlimit --nofile=100 rm -f $OUTSIDE/victim", deny, "confinement"},
		{"prlimit --cpu=10:20 --as=1000 rm -rf /", deny, "catastrophic"},
		{"setpriv --no-new-privs rm -f $OUTSIDE/victim", deny, "confinement"},
		{"chrt -o 0 rm -f $OUTSIDE/victim", deny, "confinement"},
		{"chrt --idle 0 rm -rf /", deny, "catastrophic"},
		{"ionice -c3 rm -f $OUTSIDE/victim", deny, "confinement"},
		{"ionice --class 3 -n7 rm -rf /", deny, "catastrophic"},
		{"stdbuf --output=L rm -rf /", deny, "catastrophic"},
		{"unshare -r rm -f $OUTSIDE/victim", deny, "confinement"},
		{"nsenter -t 1 -m rm -rf /", deny, "catastrophic"},
		{"chroot / rm -rf /", deny, "catastrophic"},
		{"firejail rm -rf ~", deny, "catastrophic"},
		{"systemd-run --user rm -rf ~", deny, "catastrophic"},
		{"sg staff rm -rf /", deny, "catastrophic"},
		{"newgrp staff", deny, ""},
		{"script -qc 'rm -rf /' /dev/null", deny, "catastrophic"},
		{"script -q /dev/null bash -c 'rm -rf /'", deny, "catastrophic"},
		{"script -q --command='rm -f $OUTSIDE/victim'", deny, "confinement"},
		{"unbuffer rm -rf /", deny, "catastrophic"},
		{"flock /tmp/l rm -rf /", deny, "catastrophic"},
		{"watch -n1 rm -rf /", deny, ""},
		{"watch -n1 rm -f $OUTSIDE/victim", deny, ""},
		// GNU parallel, fd, BSD xargs, project runners.
		{"parallel rm -rf ::: ~", deny, "catastrophic"},
		{"parallel -j4 'rm -f {}' ::: $OUTSIDE/victim", deny, "confinement"},
		{"parallel rm -rf < names.txt", ask, "dynamic"},
		{"parallel echo ::: a b c", allow, ""},
		{"fd -x rm -rf /", deny, "catastrophic"},
		{"fd -e txt --exec-batch rm -f $OUTSIDE/victim", deny, "confinement"},
		{"fd -e go -x wc -l", allow, ""},
		{"xargs -J % rm -rf % / < names.txt", deny, "catastrophic"},
		{"xargs dd < names.txt", ask, "dynamic"},
		{"uv run rm -rf /", deny, "catastrophic"},
		{"poetry run rm -f $OUTSIDE/victim", deny, "confinement"},
		{"npm exec -- rm -rf /", deny, "catastrophic"},
		{"pnpm exec rm -rf ~", deny, "catastrophic"},
		{"bundle exec rm -rf /", deny, "catastrophic"},
		{"direnv exec . rm -rf /", deny, "catastrophic"},
		{"nix-shell -p hello --run 'rm -rf /'", deny, "catastrophic"},
		{"uv run pytest", allow, ""},
		{"npm exec -- prettier --check .", allow, ""},
		{"rg --hostname-bin='rm -rf /' x", deny, "catastrophic"},
		{"rg --pre date x", ask, "code-execution"},
		// Opaque shells and unknown runners ask; they are never allowed.
		{"pwsh -Command Get-ChildItem", ask, "dynamic"},
		{"powershell -c 'Remove-Item -Recurse C:\\'", ask, ""},
		{"cmd /c dir", ask, "dynamic"},
		{"somerunner rm -f a.txt", ask, "code-execution"},
		{"mywrap --flag bash -c date", ask, "code-execution"},
		{"somerunner build.log", allow, ""},
		{"echo rm -rf /", allow, ""},
		{"git rm -q --cached a.txt", allow, ""},
		{"man rm", deny, "interactive"},
	})
}
