//go:build unix

package config

import "syscall"

// openFlags open a file without waiting: a FIFO opens at once (and is then
// refused for what it is) instead of blocking until something writes to it.
const openFlags = syscall.O_NONBLOCK
