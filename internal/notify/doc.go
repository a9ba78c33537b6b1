// Package notify serves a seccomp user-notification listener: it takes the
// calls a filter hands over (SECCOMP_RET_USER_NOTIF), lets a Handler perform
// each on the caller's behalf, and answers with the handler's result, a
// descriptor placed in the caller's table included.
//
// A handler must perform the call itself rather than ask the kernel to
// continue it: the kernel would read the caller's arguments again, after the
// handler looked at them, and another thread of the caller may have changed
// them meanwhile.
package notify
