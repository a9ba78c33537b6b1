package checkpoint

import "testing"

// CrashHookForTest sets crashHook for t.
func CrashHookForTest(t *testing.T, hook func(step string) error) {
	crashHook = hook
	t.Cleanup(func() { crashHook = func(string) error { return nil } })
}

// StageBesideForTest sets stageBeside for t.
func StageBesideForTest(t *testing.T, beside bool) {
	stageBeside = beside
	t.Cleanup(func() { stageBeside = true })
}
