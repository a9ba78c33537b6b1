package shellgate

import "errors"

// interruptGroup is not available: Windows has no signals to send a process group.
func interruptGroup(int) error {
	return errors.New("Ctrl-C cannot be sent to a job without a terminal on Windows; kill the job instead")
}
