// Package idmap shows host directories as a user who is not root sees them:
// a detached, read-only copy of a directory's mounts whose files all belong
// to nobody (an idmapped mount). A process of uid 0 without capabilities, as
// a sandbox session's commands are when shellgate runs as root, then reads
// only what others may read there, at any depth, with no list of what only
// root may read to keep up to date.
package idmap
