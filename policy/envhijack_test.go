package policy_test

import "testing"

// TestEnvironmentHijack pins root cause 7 of issue 10: an assignment to a
// variable that changes how later commands run is judged however it is
// spelled, not only as NAME=value.
func TestEnvironmentHijack(t *testing.T) {
	checkDefaults(t, nil, []decisionCase{
		{"read PATH <<< /tmp/bin:/usr/bin; git status", ask, "code-execution"},
		{"read -r BASH_ENV < a.txt; bash -c true", ask, "code-execution"},
		{"IFS=, read -ra LD_PRELOAD <<< x.so", ask, "code-execution"},
		{"read -a GIT_DIR <<< x", ask, "code-execution"},
		{"export \"BASH_ENV=./e.sh\"; bash -c true", ask, "code-execution"},
		{"export 'PATH=bin:/usr/bin'", ask, "code-execution"},
		{"export {BASH_ENV,X}=./e.sh; bash -c true", ask, "code-execution"},
		{"declare -x {LD_PRELOAD,Y}=x.so", ask, "code-execution"},
		{"command export BASH_ENV=./e.sh", ask, "code-execution"},
		{"builtin export GIT_DIR=x", ask, "code-execution"},
		{"declare -n r=CDPATH; r=/x; cd sub", ask, ""},
		{"typeset -n ref=PATH", ask, "code-execution"},
		{"local -n r=\"$x\"", ask, ""},
		{"shopt -s cdable_vars", ask, "dynamic"},
		{"printf -v PATH %s /tmp/bin", ask, "code-execution"},
		{"printf -vGOFLAGS %s -toolexec=x", ask, "code-execution"},
		{"mapfile -t LD_LIBRARY_PATH < a.txt", ask, "code-execution"},
		{"readarray PYTHONPATH < a.txt", ask, "code-execution"},
		{"getopts ab GIT_SSH_COMMAND", ask, "code-execution"},
		{"export \"$name=x\"", ask, "dynamic"},
		// The list, spelled NAME=value.
		{"GOPROXY=http://127.0.0.1:1 go mod tidy", ask, "code-execution"},
		{"GOENV=./x go build", ask, "code-execution"},
		{"https_proxy=http://127.0.0.1:1 git status", ask, "code-execution"},
		{"PIP_INDEX_URL=http://x pip show y", ask, "code-execution"},
		{"GIT_EXEC_PATH=/x git status", ask, "code-execution"},
		{"NPM_CONFIG_REGISTRY=http://x npm test", ask, ""},
		// git appends its trace to the file an absolute path names (session
		// 30 review): a write, judged where it lands.
		{"GIT_TRACE=/etc/x git status", deny, "confinement"},
		{"GIT_TRACE_PACKET=~/.bashrc git status", deny, "confinement"},
		{"export GIT_TRACE2_EVENT=/var/x; git status", deny, "confinement"},
		{"env GIT_TRACE_PERFORMANCE=/etc/x git log", deny, "confinement"},
		{"git -c trace2.eventTarget=/etc/x status", ask, "code-execution"},
		{"GIT_TRACE=1 git status", allow, ""},
		{"GIT_TRACE=true GIT_TRACE_PACKET=2 git status", allow, ""},
		{"GIT_TRACE=$PWD/trace.log git status", allow, ""},
		{"git -c trace2.eventTarget=1 status", allow, ""},
		// Ordinary variables stay allowed.
		{"read line < a.txt; echo \"$line\"", allow, ""},
		{"printf -v msg %s hi; echo \"$msg\"", allow, ""},
		{"export FOO=bar; echo $FOO", allow, ""},
		{"export \"FOO=bar baz\"", allow, ""},
		{"declare -n r=foo", allow, ""},
		{"mapfile -t lines < a.txt", allow, ""},
		{"GIT_AUTHOR_NAME=x git log -1", allow, ""},
		{"GIT_PAGER=cat git log -1", allow, ""},
		{"PYTHONUNBUFFERED=1 python3 -c 'print(1)'", allow, ""},
		{"no_proxy=localhost git status", allow, ""},
	})
}

// TestHistoryWrites: history -w and -a write the shell's history list to the
// file named (or HISTFILE): `history -s 'cmd'; history -w ~/.bashrc` plants
// a line in the user's startup file (session 30 review).
func TestHistoryWrites(t *testing.T) {
	checkDefaults(t, nil, []decisionCase{
		{"history -w ~/.bashrc", deny, "confinement"},
		{"history -s 'curl x | sh'; history -aw ~/.profile", deny, "confinement"},
		{"history -a /etc/x", deny, "confinement"},
		{"HISTFILE=~/.bashrc; history -w", deny, "confinement"},
		{"export HISTFILE=/etc/x", deny, "confinement"},
		{"history", allow, ""},
		{"history -w h.txt", allow, ""},
		{"history -r ~/.bashrc", allow, ""},
		{"HISTFILE=h.txt; history -c", allow, ""},
	})
}
