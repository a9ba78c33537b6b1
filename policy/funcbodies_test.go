package policy_test

import "testing"

// A function's body is judged where it is called, with the words it is
// given, where every call is followed and nothing may call it unseen; its
// judgement at the definition, with its arguments unknown, stands where it
// is never called, a call is not followed, or it escapes (exported, a
// command, eval or sourced file only known at run time).
func TestFunctionBodiesJudgedAtCalls(t *testing.T) {
	checkDefaults(t, nil, []decisionCase{
		{`f(){ rm -rf "$1"; }; f build`, allow, ""},
		{`clean(){ rm -rf "$1" "$2"; }; clean build dist; clean out tmp`, allow, ""},
		{`f(){ rm -rf "$1"; }; g(){ f "$1"; }; g build`, allow, ""},
		{`f(){ eval "$1"; }; f 'ls -la'`, allow, ""},
		{`f(){ rm -rf "$1"; }; f /`, deny, "catastrophic"},
		{`f(){ rm -rf "$1"; }; f build; f /`, deny, "catastrophic"},
		{`f(){ rm -rf "$1"; }`, ask, "dynamic"},
		{`f(){ rm -rf "$1"; }; f "$X"`, ask, "dynamic"},
		{`f(){ rm -rf "$1"; }; export -f f; f build`, ask, "dynamic"},
		{`f(){ rm -rf "$1"; }; declare -fx f; f build`, ask, "dynamic"},
		{`f(){ rm -rf "$1"; }; f build; $X`, ask, "dynamic"},
		{`f(){ rm -rf "$1"; }; f build; eval "$X"`, ask, "dynamic"},
		{`f(){ rm -rf "$1"; }; f build; "$@"`, ask, "dynamic"},
		{`f(){ rm -rf "$1"; }; f build; source ./x.sh`, ask, "dynamic"},
		{`f(){ rm -rf "$1"; f x; }; f build`, ask, "dynamic"},
		{`f build; f(){ rm -rf "$1"; }`, ask, "dynamic"},
	})
}
