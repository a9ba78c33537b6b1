// Package copyup keeps a sandboxed command's writes from reaching a file
// outside the project through a hard link: a file in the root that shares
// its inode with another name (pnpm's and uv's stores link their files into
// node_modules and .venv, `git clone --local` links objects) is copied and
// the copy put in its place before the command writes, as an overlay copies
// up a lower file. Neither Landlock nor a mount can tell such a file from
// any other in the root, so the copy is made where the file is opened.
//
// A notifying seccomp filter (seccomp.WriteOpens) hands every open that may
// write an existing file, truncate, the chmod calls and the setxattr and
// removexattr calls to Opener.Handle,
// which performs the call itself and places the file in the caller's table. It resolves the
// caller's path as the caller would (its working directory, its root, its
// /proc/self) and opens on a thread confined as the commands are (the same
// Landlock ruleset, no capabilities), so the call is allowed exactly when the
// command's own would be. It opens without O_TRUNC, checks the opened file
// (so no path swapped in meanwhile escapes the check), breaks a link of a
// regular file, and only then truncates.
//
// With a Stager (SetStager), the filter hands over every call that makes a
// name as well (seccomp.Creations: mkdir, mknod, symlink, link, rename, any
// open with O_CREAT), and Opener performs each in the directory its path
// leads to, held by a descriptor, after the stager judged the name there
// (create_linux.go): made as asked, staged elsewhere (a protected entry the
// host's tools must not see while the session runs), refused, or crossed
// (EXDEV). Writes to names Watched says are judged too.
//
// Known limits: links within the root are broken too (the two names then
// differ after a write through one); set-ID bits and extended attributes
// other than the user's own and ACLs are not copied; chown on a linked
// file still changes it for every name (a change of mode, times or
// extended attributes is handled: mode_linux.go, times_linux.go); a write
// through a magic link of another process (/proc/PID/fd/N of a process
// other than the caller) is refused, as is one through a descriptor whose name was removed while the file has
// another (its other name may be outside the root). A command cannot
// restrict itself further with Landlock (the filter answers ENOSYS, as a
// kernel without it would): these opens run under the session's domain
// only, since no kernel interface tells a caller's, and letting the
// caller's kernel do them (SECCOMP_USER_NOTIF_FLAG_CONTINUE) would resolve
// the path again after the link was counted.
package copyup

// Layer names the guard in a sandbox report: "copy-up" when it runs.
const Layer = "hard_links"
