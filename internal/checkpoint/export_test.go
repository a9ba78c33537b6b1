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

// BoundForTest holds the store to its bounds now, as every 64th command does.
func (s *Store) BoundForTest() error {
	return s.locked(func() error {
		size, err := s.Size()
		if err != nil {
			return err
		}
		return s.bound(size, false)
	})
}
