package policy_test

import (
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// TestOptionSpellings pins root cause 3 of issue 10: one option parser. Every
// spelling a program accepts — unique long prefixes, --opt=value and --opt
// value, bundled short options with attached values — is read the same way,
// by the analysis and the policy alike.
func TestOptionSpellings(t *testing.T) {
	l := newLab(t)
	e, err := policy.New(policy.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	const deny, ask, allow = policy.Deny, policy.Ask, policy.Allow
	checkAll(t, e, l.env(), l, []decisionCase{
		// Destination options of mv, cp, ln, install.
		{"mv --target-dir=$OUTSIDE a.txt", deny, "confinement"},
		{"mv --targ $OUTSIDE a.txt", deny, "confinement"},
		{"mv -t$OUTSIDE a.txt", deny, "confinement"},
		{"mv -ft $OUTSIDE a.txt", deny, "confinement"},
		{"mv a.txt -t $OUTSIDE", deny, "confinement"},
		{"cp --targ=$OUTSIDE a.txt", deny, "confinement"},
		{"ln -sft $OUTSIDE a.txt", deny, "confinement"},
		{"install -Dt $OUTSIDE a.txt", deny, "confinement"},
		{"mv --target-directory=build a.txt", allow, ""},
		// Output options.
		{"sort --out=$OUTSIDE/x README.md", deny, "confinement"},
		{"sort --o $OUTSIDE/x README.md", deny, "confinement"},
		{"sort -ro$OUTSIDE/x README.md", deny, "confinement"},
		{"sort -rno $OUTSIDE/x README.md", deny, "confinement"},
		{"sort -o sorted.txt README.md", allow, ""},
		{"git rev-list --all --out=$OUTSIDE/x", deny, "confinement"},
		{"git log --outp=$OUTSIDE/x", deny, "confinement"},
		{"git checkout-index -a --prefix=$OUTSIDE/", deny, "confinement"},
		{"git checkout-index -a --pre $OUTSIDE/", deny, "confinement"},
		{"git clone -q --sep=$OUTSIDE/gd . cl", deny, "confinement"},
		{"git clone --separate-git-dir $OUTSIDE/gd . cl", deny, "confinement"},
		// sed in place, and its e command, in every spelling.
		{"sed --in-pl s/a/b/ $OUTSIDE/victim", deny, "confinement"},
		{"sed -i.bak s/a/b/ $OUTSIDE/victim", deny, "confinement"},
		{"sed -Ei s/a/b/ $OUTSIDE/victim", deny, "confinement"},
		{"sed -ni s/a/b/p $OUTSIDE/victim", deny, "confinement"},
		{"sed -i.bak s/a/b/ a.txt", allow, ""},
		{"sed -ne's|.*|date|e' README.md", ask, "code-execution"},
		{"sed --expr='1e date' README.md", ask, "code-execution"},
		{"sed --expression '1e date' README.md", ask, "code-execution"},
		{"sed -n -e p -e '1e date' README.md", ask, "code-execution"},
		{"sed -n -e p README.md", allow, ""},
		// Directory options of wrappers and builds.
		{"env --ch=$OUTSIDE rm -f victim", deny, "confinement"},
		{"env --chdir $OUTSIDE rm -f victim", deny, "confinement"},
		{"env -C$OUTSIDE rm -f victim", deny, "confinement"},
		{"env -iC $OUTSIDE rm -f victim", deny, "confinement"},
		{"timeout 5 env --ch=$OUTSIDE rm -f victim", deny, "confinement"},
		{"make --dir=$OUTSIDE", deny, "confinement"},
		{"make -sC $OUTSIDE", deny, "confinement"},
		{"make -C$OUTSIDE all", deny, "confinement"},
		{"tar -xf a.tar --dir=$OUTSIDE", deny, "confinement"},
		{"tar -xf a.tar -C $OUTSIDE", deny, "confinement"},
		{"make -C sub", allow, ""},
		// Options that run a command.
		{"tar --to-c='rm -rf /' -xf a.tar", deny, "catastrophic"},
		{"tar -xf a.tar --use-comp=date", ask, "code-execution"},
		{"tar -xIdate -f a.tar", ask, "code-execution"},
		{"rsync --rs=date a b", ask, "code-execution"},
		{"split --filt='rm -rf /' README.md", deny, "catastrophic"},
		{"git grep -Odate x", ask, "code-execution"},
		{"git rebase --exe date main", ask, "code-execution"},
		// git's global options, attached or not.
		{"git -ccore.fsmonitor='rm -rf /' status", deny, "catastrophic"},
		{"git -c core.fsmonitor='rm -rf /' status", deny, "catastrophic"},
		{"git -ccore.hooksPath=/x status", ask, "code-execution"},
		{"git -C$OUTSIDE status", deny, "confinement"},
		{"git --git-dir=$OUTSIDE/.git status", deny, "confinement"},
		{"git -c color.ui=never -C sub status", allow, ""},
		// Wrappers: the command is the first operand after the options.
		{"nice -n5 rm -rf /", deny, "catastrophic"},
		{"nice --adj 5 rm -rf /", deny, "catastrophic"},
		{"timeout -s KILL 5 rm -rf /", deny, "catastrophic"},
		{"timeout --sig=KILL 5 rm -rf /", deny, "catastrophic"},
		{"stdbuf -oL rm -rf /", deny, "catastrophic"},
		{"xargs -I{} rm -rf / < names.txt", deny, "catastrophic"},
		{"xargs -n1 -P4 rm -rf / < names.txt", deny, "catastrophic"},
		{"flock -w 5 lock rm -rf /", deny, "catastrophic"},
		{"flock lock -c 'rm -rf /'", deny, "catastrophic"},
		{"taskset -c 0 rm -rf /", deny, "catastrophic"},
		{"taskset 1 rm -rf /", deny, "catastrophic"},
		{"prlimit --nofile=100 rm -rf /", deny, "catastrophic"},
		{"chrt -o 0 rm -rf /", deny, "catastrophic"},
		{"setarch x86_64 -R rm -rf /", deny, "catastrophic"},
		// Options that look like others elsewhere.
		{"dmesg -f kern", allow, ""},
		{"dmesg -w", deny, "interactive"},
		{"tail --fol a.txt", deny, "interactive"},
		{"tail -n5 a.txt", allow, ""},
		{"git stash show -p", allow, ""},
		{"git stash push -p", deny, "interactive"},
		{"git commit --mess=x", allow, ""},
		{"git commit -qm x", allow, ""},
		{"fzf -f x < names.txt", allow, ""},
		{"fzf --filter=x < names.txt", allow, ""},
		{"fzf --bash", allow, ""},
		{"sqlite3 -version", allow, ""},
		{"mysql -?", allow, ""},
	})
}
