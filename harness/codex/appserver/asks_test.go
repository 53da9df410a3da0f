package appserver

import (
	"encoding/json"
	"testing"
)

// AsksPerson takes the three approvals (in 0.171.0's params shape) and no
// other server request; Resolved reads the answered request's thread.
func TestAsksPersonAndResolved(t *testing.T) {
	msg := func(method, params string) Message {
		id := json.RawMessage(`7`)
		return Message{ID: &id, Method: method, Params: json.RawMessage(params)}
	}
	q, ok := AsksPerson(msg(MethodCommandApproval,
		`{"threadId":"th","turnId":"tu","itemId":"i","startedAtMs":1,"command":"/bin/bash -lc 'touch x'","reason":"needs the network","cwd":"/w"}`))
	if !ok || q.ThreadID != "th" || q.Command != "/bin/bash -lc 'touch x'" || q.Reason != "needs the network" || q.Method != MethodCommandApproval {
		t.Errorf("command approval: %+v, %v", q, ok)
	}
	for _, m := range []string{MethodFileChangeApproval, MethodPermissionsApproval} {
		if q, ok := AsksPerson(msg(m, `{"threadId":"th","turnId":"tu","itemId":"i","startedAtMs":1}`)); !ok || q.ThreadID != "th" || q.Method != m {
			t.Errorf("%s: %+v, %v", m, q, ok)
		}
	}
	for _, m := range []string{"item/tool/call", "account/chatgptAuthTokens/refresh", "execCommandApproval"} {
		if _, ok := AsksPerson(msg(m, `{"threadId":"th"}`)); ok {
			t.Errorf("%s taken as a question for a person", m)
		}
	}
	if _, ok := AsksPerson(msg(MethodCommandApproval, `not json`)); ok {
		t.Error("an approval with params that do not decode was taken")
	}
	th, req, ok := Resolved(Message{Method: MethodRequestResolved, Params: json.RawMessage(`{"threadId":"th","requestId": 7}`)})
	if !ok || th != "th" || req != RequestKey(json.RawMessage(`7`)) {
		t.Errorf("serverRequest/resolved: %q %q, %v", th, req, ok)
	}
	if RequestKey(json.RawMessage(` "r-1" `)) != RequestKey(json.RawMessage(`"r-1"`)) || RequestKey(json.RawMessage(`7`)) == RequestKey(json.RawMessage(`"7"`)) {
		t.Error("RequestKey: the same id spelled apart, or a number taken for a string")
	}
	if _, _, ok := Resolved(Message{Method: MethodTurnStarted, Params: json.RawMessage(`{"threadId":"th"}`)}); ok {
		t.Error("turn/started read as a resolved request")
	}
}
