//go:build unix && !linux && !darwin

package runner

import "os"

// Other Unix systems: process groups are signalled, but their members cannot be
// listed, so background processes are neither reported nor waited for.

func enlargePipe(*os.File) {}

func groupMembers(int, Launcher) []procID   { return nil }
func liveOf(int, []procID) []procID         { return nil }
func membersAmong(int, []int) []procID      { return nil }
func markedProcs([]byte, Launcher) []procID { return nil }

// unread is unknown here; an idle pipe is told only by its Read not returning.
func unread(*os.File) int { return 0 }
