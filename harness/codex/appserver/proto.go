package appserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pantty/pantty/internal/guard"
)

// The part of Codex's app-server protocol pantty speaks, as the installed
// version prints it (`codex app-server generate-json-schema`; measured on
// 0.171.0, docs/codex.md, "The app-server path (experimental, measured on 0.171.0)"). Only the fields pantty reads
// are declared; the rest of each object is ignored.

// Notification methods pantty reads.
const (
	MethodTurnStarted   = "turn/started"
	MethodTurnCompleted = "turn/completed"
	MethodTokenUsage    = "thread/tokenUsage/updated"
	MethodError         = "error"
	MethodItemCompleted = "item/completed"
	MethodThreadStatus  = "thread/status/changed"
	MethodCompacted     = "thread/compacted"
)

// Server requests that ask a person, as 0.171.0 sends them to every client
// (the v2 names; each carries the thread it is for), and the notification
// that says a request was answered, by whichever client answered first.
const (
	MethodCommandApproval     = "item/commandExecution/requestApproval"
	MethodFileChangeApproval  = "item/fileChange/requestApproval"
	MethodPermissionsApproval = "item/permissions/requestApproval"
	MethodRequestResolved     = "serverRequest/resolved"
)

// Turn statuses (TurnStatus).
const (
	StatusCompleted   = "completed"
	StatusInterrupted = "interrupted"
	StatusFailed      = "failed"
	StatusInProgress  = "inProgress"
)

// Thread is the part of a thread/start or thread/resume answer pantty keeps.
type Thread struct {
	ID    string `json:"id"`
	Path  string `json:"path"` // the rollout file
	Turns []Turn `json:"turns"`
}

// Turn is a turn as the protocol reports it (turn/start's answer,
// turn/started, turn/completed).
type Turn struct {
	ID     string            `json:"id"`
	Status string            `json:"status"`
	Error  *TurnError        `json:"error"`
	Items  []json.RawMessage `json:"items"`
}

// TurnError is a failed or interrupted turn's error. CodexErrorInfo is
// either a string ("unauthorized", "usageLimitExceeded", …) or an object
// with one key ({"responseTooManyFailedAttempts": {"httpStatusCode": 429}}):
// kept raw, read with Info.
type TurnError struct {
	Message           string          `json:"message"`
	CodexErrorInfo    json.RawMessage `json:"codexErrorInfo"`
	AdditionalDetails string          `json:"additionalDetails"`
}

// Info names the error's CodexErrorInfo: its string, or its one key, and the
// HTTP status an object carries (0 when none).
func (e TurnError) Info() (name string, status int) {
	if json.Unmarshal(e.CodexErrorInfo, &name) == nil {
		return name, 0
	}
	var obj map[string]struct {
		HTTPStatusCode *int `json:"httpStatusCode"`
	}
	if json.Unmarshal(e.CodexErrorInfo, &obj) == nil {
		for k, v := range obj {
			if v.HTTPStatusCode != nil {
				status = *v.HTTPStatusCode
			}
			return k, status
		}
	}
	return "", 0
}

// TurnNote is turn/started's and turn/completed's params.
type TurnNote struct {
	ThreadID string `json:"threadId"`
	Turn     Turn   `json:"turn"`
}

// ErrorNote is the error notification: WillRetry says Codex retries on its
// own (the turn is not over).
type ErrorNote struct {
	ThreadID  string    `json:"threadId"`
	TurnID    string    `json:"turnId"`
	Error     TurnError `json:"error"`
	WillRetry bool      `json:"willRetry"`
}

// TokenUsageNote is thread/tokenUsage/updated: the last request's usage and
// the thread's total, and the model's window as Codex counts it.
type TokenUsageNote struct {
	ThreadID   string `json:"threadId"`
	TurnID     string `json:"turnId"`
	TokenUsage struct {
		Last               TokenUsage `json:"last"`
		Total              TokenUsage `json:"total"`
		ModelContextWindow int64      `json:"modelContextWindow"`
	} `json:"tokenUsage"`
}

// TokenUsage is one TokenUsageBreakdown.
type TokenUsage struct {
	InputTokens           int64 `json:"inputTokens"`
	CachedInputTokens     int64 `json:"cachedInputTokens"`
	OutputTokens          int64 `json:"outputTokens"`
	ReasoningOutputTokens int64 `json:"reasoningOutputTokens"`
	TotalTokens           int64 `json:"totalTokens"`
}

// ItemNote is item/started's and item/completed's params; Item is read with
// AgentText.
type ItemNote struct {
	ThreadID string          `json:"threadId"`
	TurnID   string          `json:"turnId"`
	Item     json.RawMessage `json:"item"`
}

// AgentText returns an agentMessage item's text (ok false for any other
// item).
func AgentText(item json.RawMessage) (text string, ok bool) {
	var it struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(item, &it) != nil || it.Type != "agentMessage" {
		return "", false
	}
	return it.Text, true
}

// Initialize opens the session: initialize, then the initialized
// notification, as every client must before any other request.
func (c *Conn) Initialize(ctx context.Context, name, version string) error {
	if err := c.Call(ctx, "initialize", map[string]any{"clientInfo": map[string]string{"name": name, "version": version}}, nil); err != nil {
		return err
	}
	return c.Notify("initialized", nil)
}

// StartThread starts a new thread in cwd (thread/start).
func (c *Conn) StartThread(ctx context.Context, cwd string) (Thread, error) {
	var r struct{ Thread Thread }
	err := c.Call(ctx, "thread/start", map[string]any{"cwd": cwd}, &r)
	return r.Thread, err
}

// ResumeThread loads a thread from its rollout, or rejoins it when this
// server runs it already (thread/resume). Its history is not asked for
// (excludeTurns): the answer would carry every turn.
func (c *Conn) ResumeThread(ctx context.Context, id string) (Thread, error) {
	var r struct{ Thread Thread }
	err := c.Call(ctx, "thread/resume", map[string]any{"threadId": id, "excludeTurns": true}, &r)
	return r.Thread, err
}

// Submit starts a turn with a guarded board message as the user's text
// (turn/start): the text goes as data, header and all, so it binds the
// evidence and shows a person at an attached TUI what came from the board.
// The answer is the accepted turn (status inProgress).
func (c *Conn) Submit(ctx context.Context, threadID string, s guard.Submission) (Turn, error) {
	if s.Text() == "" {
		return Turn{}, fmt.Errorf("appserver: an empty submission")
	}
	return c.StartTurn(ctx, threadID, s.Text())
}

// StartTurn starts a turn with text as it is. The board door never calls it
// with board text (Submit takes only a guard.Submission); it is the raw
// path `pantty measure` and the tests use to show what unguarded text does.
func (c *Conn) StartTurn(ctx context.Context, threadID, text string) (Turn, error) {
	var r struct{ Turn Turn }
	err := c.Call(ctx, "turn/start", map[string]any{"threadId": threadID,
		"input": []any{map[string]any{"type": "text", "text": text}}}, &r)
	return r.Turn, err
}

// Interrupt asks the server to stop a running turn (turn/interrupt). The
// answer only says the request was taken: the turn's end is its
// turn/completed (status interrupted when the interrupt held).
func (c *Conn) Interrupt(ctx context.Context, threadID, turnID string) error {
	return c.Call(ctx, "turn/interrupt", map[string]any{"threadId": threadID, "turnId": turnID}, nil)
}

// Compact starts a compaction of the thread (thread/compact/start); its end
// is the compaction's turn/completed.
func (c *Conn) Compact(ctx context.Context, threadID string) error {
	return c.Call(ctx, "thread/compact/start", map[string]any{"threadId": threadID}, nil)
}

// End is what a turn/completed says about one turn: how it ended, the
// agent's reply (its last agentMessage item), and for a failed or
// interrupted turn the error with its CodexErrorInfo name and HTTP status.
type End struct {
	ThreadID, TurnID string
	Status           string // StatusCompleted, StatusInterrupted, StatusFailed
	Reply            string
	Error            *TurnError
	Info             string // Error's CodexErrorInfo name ("" without one)
	HTTPStatus       int    // the status Info carries, 0 when none
}

// TurnEnd reads a turn/completed notification (ok false for any other
// message). A cancel is verified by End.Status == StatusInterrupted, never by
// turn/interrupt's answer.
func TurnEnd(m Message) (e End, ok bool) {
	n, ok := paramsOf[TurnNote](m, MethodTurnCompleted)
	if !ok {
		return End{}, false
	}
	e = End{ThreadID: n.ThreadID, TurnID: n.Turn.ID, Status: n.Turn.Status, Error: n.Turn.Error}
	for _, it := range n.Turn.Items {
		if text, ok := AgentText(it); ok {
			e.Reply = text
		}
	}
	if e.Error != nil {
		e.Info, e.HTTPStatus = e.Error.Info()
	}
	return e, true
}

// Context is one thread/tokenUsage/updated reading: what the last model
// request sent (its input tokens, the context's occupancy) against the
// model's window as Codex counts it (95 % of the model's, as in the rollout).
type Context struct {
	ThreadID, TurnID string
	Input, Cached    int64
	Window           int64
}

// ContextOf reads a thread/tokenUsage/updated notification (ok false for
// any other message). Total is cumulative over the thread and never read.
func ContextOf(m Message) (Context, bool) {
	n, ok := paramsOf[TokenUsageNote](m, MethodTokenUsage)
	if !ok {
		return Context{}, false
	}
	u := n.TokenUsage
	return Context{ThreadID: n.ThreadID, TurnID: n.TurnID, Input: u.Last.InputTokens, Cached: u.Last.CachedInputTokens, Window: u.ModelContextWindow}, true
}

// ThreadIdle reads a thread/status/changed notification: its thread, and
// whether the server says no turn runs on it (status type "idle"; a turn
// running is "active"). ok is false for any other message.
func ThreadIdle(m Message) (threadID string, idle, ok bool) {
	n, ok := paramsOf[struct {
		ThreadID string `json:"threadId"`
		Status   struct {
			Type string `json:"type"`
		} `json:"status"`
	}](m, MethodThreadStatus)
	if !ok || n.ThreadID == "" {
		return "", false, false
	}
	return n.ThreadID, n.Status.Type == "idle", true
}

// paramsOf decodes the params of a notification of the given method; ok is
// false for another method or params that do not decode as T.
func paramsOf[T any](m Message, method string) (n T, ok bool) {
	if m.Method != method || json.Unmarshal(m.Params, &n) != nil {
		var zero T
		return zero, false
	}
	return n, true
}

// Question is what pantty reads of a server request that asks a person: the
// thread it is for, and the command and reason the harness shows with it.
type Question struct {
	Method   string `json:"-"`
	ThreadID string `json:"threadId"`
	Command  string `json:"command"`
	Reason   string `json:"reason"`
}

// AsksPerson reads a server request that asks a person (an approval of a
// command, of a file change or of more permissions). ok is false for every
// other request (a dynamic tool call, a token refresh): nobody at a viewer
// answers those.
func AsksPerson(m Message) (q Question, ok bool) {
	switch m.Method {
	case MethodCommandApproval, MethodFileChangeApproval, MethodPermissionsApproval:
	default:
		return Question{}, false
	}
	if q, ok = paramsOf[Question](m, m.Method); ok {
		q.Method = m.Method
	}
	return q, ok
}

// Resolved reads serverRequest/resolved: the thread whose request was
// answered, and the request's id as RequestKey spells it.
func Resolved(m Message) (thread, request string, ok bool) {
	n, ok := paramsOf[struct {
		ThreadID  string          `json:"threadId"`
		RequestID json.RawMessage `json:"requestId"`
	}](m, MethodRequestResolved)
	return n.ThreadID, RequestKey(n.RequestID), ok
}

// RequestKey spells a JSON-RPC request id (a number or a string) the same
// way wherever it was read: a server request's ID, a resolved notification's
// requestId.
func RequestKey(id json.RawMessage) string {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return string(id)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
