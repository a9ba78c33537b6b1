package lane

import "os"

// PrivateState points XDG_STATE_HOME at a directory of this test run's own,
// outside /tmp, so that no test writes the user's state (the tool caches'
// copies of the projects the tests make, among others); the returned func
// removes it. For a TestMain: the binaries tests start inherit it.
func PrivateState() (remove func()) {
	state, err := os.MkdirTemp("/var/tmp", "shellgate-test-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	return func() { os.RemoveAll(state) }
}
