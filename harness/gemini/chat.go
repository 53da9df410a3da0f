package gemini

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/state"
)

// Gemini CLI 0.61.0 records a session as JSON lines under
// GEMINI_CLI_HOME/.gemini/tmp/<project>/chats/session-<start>-<first 8 of the
// id>.jsonl (measured 2026-12-04): a header line {"sessionId", …}, then one
// line per message ({"id","timestamp","type":"user"|"gemini"|"info",
// "content", "tokens"}) and "$set" lines that change the header or replace
// the whole message list ({"$set":{"messages":[…]}}: after /compress, after a
// cancel, and at the start of a resumed file). A resumed session starts a new
// file with the same id. The functions here replay those lines into the
// message list the CLI holds.

// maxChatLine bounds one line of a chat file (a "$set" of every message).
const maxChatLine = 64 << 20

// message is one recorded message.
type message struct {
	ID        string          `json:"id"`
	Timestamp time.Time       `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	Tokens    *struct {
		Input int `json:"input"`
	} `json:"tokens"`
	Model string `json:"model"`
	// ToolCalls are the model's tool calls of this reply, recorded once
	// they completed (Gemini CLI 0.61.0's recordCompletedToolCalls, called
	// before the results go back to the model): a reply that has them is a
	// step of the turn, not its end.
	ToolCalls []json.RawMessage `json:"toolCalls"`
}

// toolResult reports whether m is the tool results the CLI sent back to the
// model, which it records as a "user" message of functionResponse parts
// (measured on 0.61.0, 2026-12-06): part of the turn, not a new prompt.
func (m message) toolResult() bool {
	var parts []map[string]json.RawMessage
	if m.Type != "user" || json.Unmarshal(m.Content, &parts) != nil || len(parts) == 0 {
		return false
	}
	for _, p := range parts {
		if _, ok := p["functionResponse"]; !ok {
			return false
		}
	}
	return true
}

// prompt reports whether m starts a turn: a user message that is not tool
// results.
func (m message) prompt() bool { return m.Type == "user" && !m.toolResult() }

// final reports whether m is a reply that ends a turn: the model's text with
// no tool call. Gemini CLI records a reply whose stream carried a function
// call before it runs the tool, with the text streamed so far (none when the
// call came alone) and no toolCalls until the tool completed; a turn's last
// reply has text (the CLI refuses an empty one as NO_RESPONSE_TEXT).
func (m message) final() bool {
	return m.Type == "gemini" && len(m.ToolCalls) == 0 && strings.TrimSpace(m.text()) != ""
}

// text is a message's content: a string, or its text parts joined.
func (m message) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(m.Content, &parts)
	var out []string
	for _, p := range parts {
		out = append(out, p.Text)
	}
	return strings.Join(out, "\n")
}

// chatLine is one line of a chat file.
type chatLine struct {
	message
	SessionID string `json:"sessionId"`
	Set       *struct {
		Messages *[]message `json:"messages"`
	} `json:"$set"`
}

// ChatFiles lists the session's chat files in the order the CLI wrote them
// (the start time is in the name); none when the session has none yet.
func ChatFiles(home, sessionID string) ([]string, error) {
	if !uuidRE().MatchString(sessionID) {
		return nil, fmt.Errorf("gemini-cli: session id %q is not a UUID", sessionID)
	}
	paths, err := filepath.Glob(filepath.Join(home, ".gemini", "tmp", "*", "chats", "session-*-"+sessionID[:8]+".jsonl"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		if id, err := headerID(p); err == nil && id == sessionID {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return filepath.Base(out[i]) < filepath.Base(out[j]) })
	return out, nil
}

// headerID is the session id on a chat file's first line.
func headerID(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxChatLine)
	if !sc.Scan() {
		return "", sc.Err()
	}
	var h chatLine
	if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
		return "", err
	}
	return h.SessionID, nil
}

// history replays the session's chat files into every message the session
// has held, in order, each with where it was last written (file:line). A
// "$set" of the message list adds the messages it does not know yet (the
// summary of a compression) rather than dropping the replaced ones: a
// submission answered before a compression was still answered.
func history(home, sessionID string) (msgs []message, where []string, err error) {
	files, err := ChatFiles(home, sessionID)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range files {
		f, err := os.Open(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), maxChatLine)
		for n := 1; sc.Scan(); n++ {
			var l chatLine
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				continue
			}
			at := p + ":" + strconv.Itoa(n)
			var got []message
			switch {
			case l.Set != nil && l.Set.Messages != nil:
				got = *l.Set.Messages
			case l.Type != "" && l.ID != "":
				got = []message{l.message}
			}
			for _, m := range got {
				if i := indexOf(msgs, m.ID); i >= 0 {
					msgs[i], where[i] = m, at
				} else {
					msgs, where = append(msgs, m), append(where, at)
				}
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, nil, err
		}
	}
	return msgs, where, nil
}

func indexOf(msgs []message, id string) int {
	for i, m := range msgs {
		if m.ID == id {
			return i
		}
	}
	return -1
}

// findSubmission looks in the session's history for the user message carrying
// the guard header of msgID and nonce; with answered, for one whose turn has
// ended: its last reply of the model ("gemini" message) before the next
// prompt (tool results are not one) is final (text, no tool call). A reply with a tool call, or one
// recorded while its tool runs, is a step: closing the message on it took a
// turn still running for processed (seen under load: the shell tool had run,
// its result not yet sent, and the pane's busy line was not drawn).
func findSubmission(home, sessionID, msgID, nonce string, answered bool) (bool, string, error) {
	found, where, _, err := findTurn(home, sessionID, msgID, nonce, answered)
	return found, where, err
}

// TurnReply is the reply of the submission's finished turn as the chat file
// holds it ("" when the turn is not there or not finished): the reply of a
// message the driver closes by the transcript because its AfterAgent had
// not come (harness.Capabilities.TurnReply).
func TurnReply(s state.Seat, c config.Config, sessionID, msgID, nonce string) (string, error) {
	_, _, reply, err := findTurn(Home(s, c), sessionID, msgID, nonce, true)
	return reply, err
}

// findTurn is findSubmission with the finished turn's reply.
func findTurn(home, sessionID, msgID, nonce string, answered bool) (found bool, at, reply string, err error) {
	msgs, where, err := history(home, sessionID)
	if err != nil {
		return false, "", "", err
	}
	for i, m := range msgs {
		if !m.prompt() {
			continue
		}
		id, nn, _, ok := guard.MatchHeader(m.text())
		if !ok || id != msgID || nn != nonce {
			continue
		}
		if !answered {
			return true, where[i], "", nil
		}
		// The turn's last reply so far must end it: an earlier final-looking
		// one followed by a tool step was not the end.
		last := -1
		for j := i + 1; j < len(msgs) && !msgs[j].prompt(); j++ {
			if msgs[j].Type == "gemini" {
				last = j
			}
		}
		if last >= 0 && msgs[last].final() {
			return true, where[last], msgs[last].text(), nil
		}
	}
	return false, "", "", nil
}

// SnapshotPrefix starts the user message that replaces the history after a
// compression: the summary the CLI asked the model for.
const SnapshotPrefix = "<state_snapshot>"

// CompressedSince reports whether the session's history was replaced by a
// compression summary at or after since (a user message starting with
// SnapshotPrefix, stamped then), and where.
func CompressedSince(home, sessionID string, since time.Time) (bool, string, error) {
	msgs, where, err := history(home, sessionID)
	if err != nil {
		return false, "", err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Type == "user" && !m.Timestamp.Before(since) && strings.HasPrefix(strings.TrimSpace(m.text()), SnapshotPrefix) {
			return true, where[i], nil
		}
	}
	return false, "", nil
}

// lastUsage is the input tokens of the model's last recorded reply: what the
// request of that reply carried (the CLI's tokens.input, from the API's
// usageMetadata.promptTokenCount), and its model.
func lastUsage(msgs []message) (input int, model string) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Type == "gemini" && m.Tokens != nil && m.Tokens.Input > 0 {
			return m.Tokens.Input, m.Model
		}
	}
	return 0, ""
}

// turnOf is the index of the turn's user message — the last one carrying
// prompt, else the last prompt (tool results are none) — or -1 when there is
// none.
func turnOf(msgs []message, prompt string) int {
	turn := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if !msgs[i].prompt() {
			continue
		}
		if turn < 0 {
			turn = i
		}
		if msgs[i].text() == prompt {
			return i
		}
	}
	return turn
}

// lastOfType is the text of the last message of type typ after the turn's
// user message (before the next prompt: a tool step's results do not end
// the turn), or "" when none.
func lastOfType(msgs []message, prompt, typ string) string {
	turn := turnOf(msgs, prompt)
	if turn < 0 {
		return ""
	}
	text := ""
	for _, m := range msgs[turn+1:] {
		if m.prompt() {
			break
		}
		if m.Type == typ && m.text() != "" {
			text = m.text()
		}
	}
	return text
}

// lastError is the text of the "error" message recorded after the turn's
// user message, or "" when none: how a turn that failed on an API error is
// recorded.
func lastError(msgs []message, prompt string) string {
	turn := turnOf(msgs, prompt)
	if turn < 0 {
		return ""
	}
	for _, m := range msgs[turn+1:] {
		if m.prompt() {
			break
		}
		if m.Type == "error" {
			return m.text()
		}
	}
	return ""
}

// lastReply is the model's reply to the turn as the chat file holds it: its
// last "gemini" message. AfterAgent's prompt_response is not that text
// against a streaming API: for a reply streamed in two chunks Gemini CLI
// 0.61.0 gave the text followed by a garbled copy of its later chunks
// ("ACK: gemini board item GEM-1  ard item GEM-1 ", 2026-12-05), while the
// chat file held the reply once (docs/gemini.md).
func lastReply(msgs []message, prompt string) string { return lastOfType(msgs, prompt, "gemini") }
