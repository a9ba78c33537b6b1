package policy_test

import (
	"fmt"
	"strings"

	"github.com/shellgate/shellgate/policy"
)

func Example() {
	e, err := policy.New(policy.Settings{Network: true, Ask: []string{"npm publish *"}})
	if err != nil {
		panic(err)
	}
	env := policy.Env{Root: "/project", Home: "/home/dev"}
	for _, cmd := range []string{
		"go test ./... && git diff --stat",
		"git status; \\rm -rf /",
		"npm publish --tag next",
		"cd .. && make",
	} {
		v := e.Check(cmd, env)
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%s → %s %s %s", cmd, v.Decision, v.Rule, v.SessionKey)))
	}
	// Output:
	// go test ./... && git diff --stat → allow
	// git status; \rm -rf / → deny catastrophic
	// npm publish --tag next → ask user.ask npm publish *
	// cd .. && make → deny confinement
}

func ExampleEngine_CheckApproved() {
	e, _ := policy.New(policy.Settings{})
	env := policy.Env{Root: "/project"}
	session := map[string]bool{}
	v := e.Check("docker run alpine true", env)
	fmt.Println(v.Decision, v.SessionKey)
	session[v.SessionKey] = true // the user answered "always for this session"
	approved := func(key string) bool { return session[key] }
	v = e.CheckApproved("docker run ubuntu echo hi", env, approved)
	fmt.Println(v.Decision)
	// Options are part of what was approved: these ask again.
	v = e.CheckApproved("docker run --privileged -v /:/host alpine sh", env, approved)
	fmt.Println(v.Decision, v.SessionKey)
	// Output:
	// ask docker run
	// allow
	// ask docker run --privileged -v /:/host
}
