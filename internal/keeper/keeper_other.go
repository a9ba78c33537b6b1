//go:build !linux

package keeper

import (
	"github.com/shellgate/shellgate/internal/checkpoint"
)

// Client is a connection to a root's keeper; there is none here.
type Client struct{}

// Dial fails: no keeper on this system.
func Dial(checkpoint.Options) (*Client, error) { return nil, ErrUnsupported }

// PID is 0.
func (c *Client) PID() int { return 0 }

// Close does nothing.
func (c *Client) Close() {}

// Snapshot fails.
func (c *Client) Snapshot(label, command, session string) (int, error) { return 0, ErrUnsupported }

// Finish fails.
func (c *Client) Finish(int) (checkpoint.Summary, error) { return checkpoint.Summary{}, ErrUnsupported }

// Start fails.
func Start([]string, Args) error { return ErrUnsupported }

// Serve fails.
func Serve(Args) error { return ErrUnsupported }

// Running is false.
func Running(checkpoint.Options) (int, bool) { return 0, false }

// RunningAt is false.
func RunningAt(string) (int, bool) { return 0, false }

// SnapshotLeaving fails: there is no keeper here.
func (c *Client) SnapshotLeaving(*checkpoint.Leave, string, string, string) (int, error) {
	return 0, ErrUnsupported
}

// FinishLeaving fails: there is no keeper here.
func (c *Client) FinishLeaving(*checkpoint.Leave, int) (checkpoint.Summary, error) {
	return checkpoint.Summary{}, ErrUnsupported
}
