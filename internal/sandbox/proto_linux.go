package sandbox

import (
	"net"

	"github.com/shellgate/shellgate/internal/sandbox/helper"
)

// shellgate and the session's helper talk over a Unix stream socket in
// frames (helper.Message, helper.Conn); this is shellgate's end.

// message is a frame, in either direction.
type message = helper.Message

// unixTransport is shellgate's end of the control socket.
type unixTransport struct{ *net.UnixConn }

func (t unixTransport) WriteMsg(b, oob []byte) (int, error) {
	n, _, err := t.WriteMsgUnix(b, oob, nil)
	return n, err
}

func (t unixTransport) ReadMsg(b, oob []byte) (int, int, error) {
	n, oobn, _, _, err := t.ReadMsgUnix(b, oob)
	return n, oobn, err
}

// wire is what of spec the helper acts on, for the setup message: the view's
// paths (Caches, Hidden, …) reach it as the plan's steps instead.
func (spec *Spec) wire() *helper.Spec {
	return &helper.Spec{
		OneShot:       spec.OneShot,
		Writable:      spec.Writable,
		Protected:     spec.Protected,
		GitDirs:       spec.GitDirs,
		Patterns:      spec.Patterns,
		Quarantine:    spec.Quarantine,
		QuarantineLog: spec.QuarantineLog,
		StoreLinks:    spec.StoreLinks,
		LinkCopyMax:   spec.LinkCopyMax,
		Network:       spec.Network,
		HostPorts:     spec.HostPorts,
		EgressPort:    spec.EgressPort,

		Limits: spec.Limits,
	}
}
