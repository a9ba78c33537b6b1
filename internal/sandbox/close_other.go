//go:build !linux

package sandbox

// CloseBeside is Close, then beside (unless nil): only a Linux session's
// helper has an exit to run it beside (session_linux.go).
func (s *Session) CloseBeside(beside func()) error {
	err := s.Close()
	if beside != nil {
		beside()
	}
	return err
}
