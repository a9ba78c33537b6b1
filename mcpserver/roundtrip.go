package mcpserver

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/shellgate/shellgate"
	"github.com/shellgate/shellgate/policy"
)

// From protocol version 2026-07-28 a server may not send requests (such as
// elicitation) while it serves one. Instead the tool result asks for input
// (inputRequests, SEP-2322), and the client calls again with the answers
// (inputResponses) and the requestState it was given.
const multiRoundTripVersion = "2026-07-28"

// approvalInput names the one input request shellgate makes.
const approvalInput = "approval"

func multiRoundTrip(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion >= multiRoundTripVersion
}

// roundTrips signs request states, so that an answer given about one request
// cannot be replayed for another.
type roundTrips struct {
	key [32]byte
}

func newRoundTrips() *roundTrips {
	var r roundTrips
	rand.Read(r.key[:]) // never fails (crypto/rand panics rather than returning errors)
	return &r
}

// state is the requestState for req: an HMAC of the request.
func (rt *roundTrips) state(req shellgate.Request) string {
	b, _ := json.Marshal(req)
	m := hmac.New(sha256.New, rt.key[:])
	m.Write(b)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// answer returns the approval the client sent with a retried call, if it sent one
// for this very request.
func (rt *roundTrips) answer(params *mcp.CallToolParamsRaw, req shellgate.Request) (*mcp.ElicitResult, bool) {
	resp, ok := params.InputResponses[approvalInput]
	if !ok || !hmac.Equal([]byte(params.RequestState), []byte(rt.state(req))) {
		return nil, false
	}
	res, ok := resp.(*mcp.ElicitResult)
	return res, ok
}

// askFirst returns the input-required result for req when the policy will ask about
// it and the session has not approved it already.
func (rt *roundTrips) askFirst(gate *shellgate.Gate, req shellgate.Request, approved *shellgate.SessionApprovals) (*mcp.CallToolResult, bool) {
	v := gate.CheckApproved(req, approved.Allowed)
	if v.Decision != policy.Ask {
		return nil, false
	}
	q := shellgate.Question{Command: req.Command, Rule: v.Rule, Reason: v.Reason, SessionKey: v.SessionKey}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{approvalInput: approvalRequest(q)},
		RequestState:  rt.state(req),
	}, true
}
