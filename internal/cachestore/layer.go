package cachestore

import "os"

// ReadyLayer readies a project's cache layer (a directory of the store) for
// a volatile overlay, boot being the machine's boot ID. Had the machine
// crashed while one was mounted, what its upper layer held only in memory
// would be lost and its files torn: the layer records the boot it was last
// mounted in (BootFile), and one from another boot is emptied, as a cache is
// rebuilt on use. The kernel's own guard, a marker the mount leaves in
// work/work/incompat that makes it refuse the layer, goes once the session
// is set up (RemoveMarker, which shellgate calls beside the session's
// commands, and its end waits for): it would also keep the user's tools
// from removing the layer, inside a directory of mode 0. A marker left there
// (a session killed before its removal) goes here. Without a boot ID, the
// overlay may not be volatile.
func ReadyLayer(layer string, boot []byte) (volatile bool, err error) {
	if len(boot) == 0 {
		return false, nil // a crash could not be told apart: plain overlays only
	}
	last, err := readSmall(layer + "/" + BootFile)
	if err == nil && string(last) != string(boot) {
		for _, d := range []string{"/upper", "/work"} {
			if err := os.RemoveAll(layer + d); err != nil {
				return false, err
			}
		}
	}
	// Only the marker: the rest of the work dir is set aside (StaleWork) or
	// the kernel's to clean at the mount.
	if err := removeMarker(layer); err != nil {
		return false, err
	}
	if err != nil { // no boot file: the layer may not be there either
		if err := os.MkdirAll(layer, 0o700); err != nil {
			return false, err
		}
	}
	if string(last) == string(boot) {
		return true, nil // not written again (see writeChanged)
	}
	return true, os.WriteFile(layer+"/"+BootFile, boot, 0o600)
}

// VolatileMarker is where a volatile overlay's mount marks its work dir.
const VolatileMarker = "/work/work/incompat"

// StaleWork, in a cache layer, is its last mount's work dir, set aside
// before the next mount (whose kernel would otherwise remove it in the
// session's set-up) and removed beside that session (RemoveStale). No other
// mount uses it meanwhile: one session at a time mounts a set of layers
// (ClaimLayers).
const StaleWork = "/stale"

// BootFile, in a cache layer, holds the boot ID of its last mount.
const BootFile = "boot_id"
