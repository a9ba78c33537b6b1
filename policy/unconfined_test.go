package policy_test

import (
	"os/user"
	"path/filepath"
	"testing"

	"github.com/shellgate/shellgate/policy"
)

// With Settings.Unconfined (a hook whose agent's own shell runs the command),
// what only a sandbox would contain is asked about: a program given on the
// command line, and reading the secrets; the same lines are allowed otherwise,
// and programs run from files, or reading elsewhere, are not asked about.
func TestUnconfined(t *testing.T) {
	l := newLab(t)
	ssh := filepath.Join(l.home, ".ssh")
	confined, err := policy.New(policy.Settings{Secrets: []string{ssh}})
	if err != nil {
		t.Fatal(err)
	}
	unconfined, err := policy.New(policy.Settings{Unconfined: true, Secrets: []string{ssh}})
	if err != nil {
		t.Fatal(err)
	}
	relHome, err := filepath.Rel(l.root, l.home)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ command, rule string }{
		{`python3 -c 'open("x","w")'`, policy.RuleExecFlags},
		{`python3 -Ic 'print(1)'`, policy.RuleExecFlags},
		{`python3 -W error -c 'print(1)'`, policy.RuleExecFlags},
		{`env FOO=1 python3 -c 'print(1)'`, policy.RuleExecFlags},
		{`bash -c "perl -le 'print 1'"`, policy.RuleExecFlags},
		{`node --eval 'require("fs")'`, policy.RuleExecFlags},
		{`ruby -e 'puts 1'`, policy.RuleExecFlags},
		{`php -r 'echo 1;'`, policy.RuleExecFlags},
		// The program after an option's value (--require lib, -d k=v), or on
		// standard input from the line itself (session 30 review).
		{`node --require ./x.js -e 'require("fs")'`, policy.RuleExecFlags},
		{`node --title t --eval 1`, policy.RuleExecFlags},
		{`php -d x=1 -r 'echo 1;'`, policy.RuleExecFlags},
		{`php -B '$a=1;' -R 'echo $argn;'`, policy.RuleExecFlags},
		{`ruby --disable gems -e 'puts 1'`, policy.RuleExecFlags},
		{`lua -l socket -e 'x()'`, policy.RuleExecFlags},
		{`osascript -l JavaScript -e 'x'`, policy.RuleExecFlags},
		{`python3 --check-hash-based-pycs always -c 'print(1)'`, policy.RuleExecFlags},
		{`expect -c 'spawn sh'`, policy.RuleExecFlags},
		{"python3 <<EOF\nimport shutil; shutil.rmtree('/x')\nEOF", policy.RuleExecFlags},
		{`python3 - <<< 'print(1)'`, policy.RuleExecFlags},
		{`python3 -W ignore /dev/stdin <<< 'print(1)'`, policy.RuleExecFlags},
		{`echo 'print(1)' | python3`, policy.RuleExecFlags},
		{`perl <<< 'unlink q(x)'`, policy.RuleExecFlags},
		{`node <<< 'x()'`, policy.RuleExecFlags},
		{`tclsh <<< 'exec rm x'`, policy.RuleExecFlags},
		{`cat ~/.ssh/id_rsa`, policy.RuleSecrets},
		{`cat < ~/.ssh/id_rsa`, policy.RuleSecrets},
		{`cp ~/.ssh/id_rsa .`, policy.RuleSecrets},
		{`tar czf keys.tgz ~/.ssh`, policy.RuleSecrets},
		{`cat ~/.ssh/*`, policy.RuleSecrets},
		{`grep -r BEGIN ~`, policy.RuleSecrets},
		{`tar czf home.tgz ~`, policy.RuleSecrets},
		{`cp -a ~ backup`, policy.RuleSecrets},
		{`git -c core.sshCommand=true status --key=~/.ssh/id_rsa`, policy.RuleSecrets},
		// Other spellings of the same read (session 30 review): a glob that
		// matches the secret, /proc's per-process links, a KEY=PATH operand.
		{`cat ~/.ss?/id_rsa`, policy.RuleSecrets},
		{`cat ~/.*/id_rsa`, policy.RuleSecrets},
		{`grep -r BEGIN ~/.s*`, policy.RuleSecrets},
		{`cat /proc/self/root$HOME/.ssh/id_rsa`, policy.RuleSecrets},
		{`cat /proc/1/root/$HOME/.ssh/../.ssh/id_rsa`, policy.RuleSecrets},
		{`cat /proc/thread-self/cwd/` + relHome + `/.ssh/id_rsa`, policy.RuleSecrets},
		{`dd if=~/.ssh/id_rsa`, policy.RuleSecrets},
		{`dd if=$HOME/.ssh/id_rsa of=k`, policy.RuleSecrets},
		{`ex -s -c 'r ~/.ssh/id_rsa' -c 'w k' -c q README.md`, policy.RuleSecrets},
		{`cat /proc/$PPID/environ`, policy.RuleSecrets},
		{`tr '\0' '\n' < "/proc/$PPID/environ"`, policy.RuleSecrets},
		{`strings /proc/1/environ`, policy.RuleSecrets},
		// Credential stores (session 30 review).
		{`git credential fill <<< host=github.com`, policy.RuleSecrets},
		{`printf 'protocol=https\nhost=github.com\n' | git credential-store get`, policy.RuleSecrets},
		{`security find-generic-password -s x -w`, policy.RuleSecrets},
		{`secret-tool lookup service x`, policy.RuleSecrets},
		{`pass show web/github`, policy.RuleSecrets},
		{`pass web/github`, policy.RuleSecrets},
		{`bw get password x`, policy.RuleSecrets},
		// Session 31: the read on a compound command or a lone redirection,
		// inside a program text (sed's r and R, awk's getline <), under
		// find's own reading of a tree, and SQL, a program sqlite3 runs.
		{`while read l; do echo $l; done < ~/.ssh/id_rsa`, policy.RuleSecrets},
		{`{ cat; } < ~/.ssh/id_rsa`, policy.RuleSecrets},
		{`echo "$(<~/.ssh/id_rsa)"`, policy.RuleSecrets},
		{`x=$(< ~/.ssh/id_rsa)`, policy.RuleSecrets},
		{`sed '1r ` + ssh + `/id_rsa' README.md`, policy.RuleSecrets},
		{`sed -e '$R ` + ssh + `/id_rsa' README.md`, policy.RuleSecrets},
		{`awk 'BEGIN{while((getline l < "` + ssh + `/id_rsa")>0) print l}'`, policy.RuleSecrets},
		{`gawk 'BEGIN { getline < "` + ssh + `/id_rsa"; print }'`, policy.RuleSecrets},
		{`find ~ -name id_rsa -exec cat {} +`, policy.RuleSecrets},
		{`find ~/.ssh -type f -execdir cat {} \;`, policy.RuleSecrets},
		{`cat /proc/self/fd/../../self/root` + ssh + `/id_rsa`, policy.RuleSecrets},
		{`cat /dev/fd/../root` + ssh + `/id_rsa`, policy.RuleSecrets},
		{`cat /proc/self/task/../root` + ssh + `/id_rsa`, policy.RuleSecrets},
		{`for f in ~/.ssh/*; do cat "$f"; done`, policy.RuleSecrets},
		{`for f in README.md ~/.ssh/id_rsa; do cat "$f"; done`, policy.RuleSecrets},
		{`select f in ~/.ssh/id_rsa; do cat $f; break; done`, policy.RuleSecrets},
		{`for d in .ssh; do cat ~/$d/id_rsa; done`, policy.RuleSecrets},
		{`for f in a b c d e; do cat ~/.ssh/$f; done`, policy.RuleSecrets},
		{`cat ~/.ssh/$KEY`, policy.RuleSecrets},
		{`cat "$HOME/.ssh/$(ls ~/.ssh | head -1)"`, policy.RuleSecrets},
		{`for x in 1 2; do for z in ~/.ssh/id_rsa; do cat $z; done; done`, policy.RuleSecrets},
		{`x=(~/.ssh/id_rsa); cat ${x[0]}`, policy.RuleSecrets},
		{`declare -a x=(~/.ssh/id_rsa); cat "${x[@]}"`, policy.RuleSecrets},
		{`case x in x) f=~/.ssh/id_rsa;; esac; cat $f`, policy.RuleSecrets},
		{`[ -n "$X" ] && k=$HOME/.ssh/id_rsa; cat $k`, policy.RuleSecrets},
		{`cat ~nosuch-shellgate-user/.ssh/id_rsa`, policy.RuleSecrets}, // a user only NSS knows (LDAP)
		// Session 38: a home expansion that guards or trims, and a name that
		// echo prints for another command to read.
		{`cat ${HOME:?}/.ssh/id_rsa`, policy.RuleSecrets},
		{`cat "${HOME%/}/.ssh/id_rsa"`, policy.RuleSecrets},
		{`cat "${HOME:-/x}/.ssh/id_rsa"`, policy.RuleSecrets},
		{`cat $(echo ~/.ssh/id_rsa)`, policy.RuleSecrets},
		{`echo ~/.ssh/id_rsa | xargs cat`, policy.RuleSecrets},
		{`gpg --import key.asc`, policy.RuleExecFlags},
		{`gpg --batch --recv-keys ABC`, policy.RuleExecFlags},
		{`gpg --homedir /tmp/g --import key.asc`, policy.RuleExecFlags},
		{`dconf write /org/gnome/x "'y'"`, policy.RuleExecFlags},
		{`dconf load / < x.ini`, policy.RuleExecFlags},
		{`gsettings set org.gnome.x y z`, policy.RuleExecFlags},
		{`xdg-mime default x.desktop text/plain`, policy.RuleExecFlags},
		{`update-alternatives --set editor /bin/x`, policy.RuleExecFlags},
		{`secret-tool store --label=x a b`, policy.RuleExecFlags},
		{`keyctl add user k v @u`, policy.RuleExecFlags},
		{`ssh-add k`, policy.RuleExecFlags},
		{`code --install-extension x.vsix`, policy.RuleExecFlags},
		{`gh alias set co --shell 'id'`, policy.RuleExecFlags},
		{`sqlite3 :memory: "select readfile('k')"`, policy.RuleExecFlags},
		{`sqlite3 x.db "VACUUM INTO '/tmp/v.db'"`, policy.RuleExecFlags},
		{`sqlite3 -cmd ".cd /tmp" x.db ".output pw" "select 1"`, policy.RuleExecFlags},
		{`sqlite3 x.db <<< "select name from fsdir('/')"`, policy.RuleExecFlags},
	} {
		v := unconfined.Check(tc.command, l.env())
		if v.Decision != policy.Ask || v.Rule != tc.rule {
			t.Errorf("unconfined %s: %s (%s), want ask under %s: %s", tc.command, v.Decision, v.Rule, tc.rule, v.Reason)
		}
		if v := confined.Check(tc.command, l.env()); v.Rule == tc.rule && v.Decision != policy.Allow {
			t.Errorf("confined %s: %s (%s): %s", tc.command, v.Decision, v.Rule, v.Reason)
		}
	}
	for _, c := range []string{
		"python3 script.py -c x", "python3 -m pytest", "python3 -", "perl script.pl", "node build.js", "echo -c",
		"python3 -m pytest -c x", "python3 x.py <<< input", "python3 -u script.py < in.txt", "ruby < x.rb", "sh <<< 'echo hi'",
		"node --inspect=9229 app.js",
		"cat ~/*/id_rsa", "cat ~/.config/*.toml", "cat *.md", "dd if=README.md of=x", "cat /proc/self/root/etc/hostname",
		"pass ls", "git config --get credential.helper", "security list-keychains", "ssh-add -L",
		"ls ~", "ls -la ~", "cat README.md", "grep -r x .", "cat ~/.bashrc", "ls ~/.ssh-notes", "du -sh ~",
		"while read l; do echo $l; done < names.txt", `echo "$(<README.md)"`, "sed '1r header.txt' README.md",
		`awk '{ print $1 }' data.csv`, `awk 'BEGIN { getline < "data.csv"; print }'`, "find ~ -name '*.md'", "find . -exec cat {} +",
		"sqlite3 x.db .tables", "sqlite3 x.db .schema", `for f in *.md; do cat "$f"; done`, `for f in a b; do echo "$f"; done`, `cat "$f"`, `cat ~/notes/$f`, `cat ./$f`, `f=~/notes.txt; cat $f`, `x=(a b); echo ${x[0]}`, `d=/tmp; ls $d`,
		"gpg --verify x.sig x", "gpg -d x.gpg", "gpg --list-keys", "gpg --armor --export ABC", "gsettings get a b",
		// Text, not reads (session 38): an argument like -rf made echo "read /".
		"echo rm -rf /", "set -- rm -rf /", "echo ~/.ssh/id_rsa", "basename ~/.ssh/id_rsa", `printf '%s\n' -R ~`,
		"cat ${HOME:?}/notes.txt", "cat $(echo README.md)",
		"xdg-mime query default text/plain", "ssh-add -l", "ssh-add -L", "keyctl show @s", "code --list-extensions", "gh pr list",
	} {
		if v := unconfined.Check(c, l.env()); v.Decision != policy.Allow && (v.Rule == policy.RuleSecrets || v.Rule == policy.RuleExecFlags) {
			t.Errorf("unconfined %s: %s (%s): %s", c, v.Decision, v.Rule, v.Reason)
		}
	}
	// ~USER is a home by name: the user's own, when USER is the user.
	if u, err := user.Current(); err == nil && u.HomeDir != "" && u.HomeDir != "/" {
		own, err := policy.New(policy.Settings{Unconfined: true, Secrets: []string{filepath.Join(u.HomeDir, ".ssh")}})
		if err != nil {
			t.Fatal(err)
		}
		cmd := "cat ~" + u.Username + "/.ssh/id_rsa"
		if v := own.Check(cmd, l.env()); v.Decision != policy.Ask || v.Rule != policy.RuleSecrets {
			t.Errorf("unconfined %s: %s (%s), want ask under secrets: %s", cmd, v.Decision, v.Rule, v.Reason)
		}
	}
	if _, err := policy.New(policy.Settings{Secrets: []string{"relative/.ssh"}}); err == nil {
		t.Error("a relative secret path was accepted")
	}
}
