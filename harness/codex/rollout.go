package codex

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/guard"
)

// RolloutPath finds a thread's rollout, Codex's session record:
// CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl. "" when there
// is none (Codex writes it with the thread's first turn).
func RolloutPath(home, thread string) (string, error) {
	if !uuidRE().MatchString(thread) {
		return "", nil
	}
	m, err := filepath.Glob(filepath.Join(home, "sessions", "*", "*", "*", "rollout-*-"+thread+".jsonl"))
	if err != nil || len(m) == 0 {
		return "", err
	}
	sort.Strings(m)
	return m[len(m)-1], nil
}

// rolloutLine is the part of a rollout line FindTurn reads. Measured shapes
// (0.171.0): event_msg task_started {turn_id}; event_msg item_completed
// {turn_id, item {type UserMessage, content [{text}]}} for the submitted
// prompt; event_msg task_complete {turn_id, last_agent_message, error} at the
// turn's end; event_msg turn_aborted {turn_id, reason} after an interrupt;
// event_msg token_count {info {last_token_usage, total_token_usage,
// model_context_window}}.
type rolloutLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type             string          `json:"type"`
		TurnID           string          `json:"turn_id"`
		LastAgentMessage *string         `json:"last_agent_message"`
		Error            json.RawMessage `json:"error"`
		Item             struct {
			Type    string `json:"type"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"item"`
	} `json:"payload"`
}

// FindTurn scans the thread's rollout for a finished model turn of the
// submission with this id and nonce: the turn whose user message carries the
// guard header, closed by a task_complete without an error and with an agent
// message. An interrupted turn (turn_aborted) or a failed one is not found.
func FindTurn(home, thread, msgID, nonce string) (bool, string, error) {
	found, at, _, err := scanRollout(home, thread, msgID, nonce, false)
	return found, at, err
}

// FindPrompt finds the submission's UserMessage item (matching id and nonce)
// whether or not its turn completed.
func FindPrompt(home, thread, msgID, nonce string) (bool, string, error) {
	found, at, _, err := scanRollout(home, thread, msgID, nonce, true)
	return found, at, err
}

// scanRollout is FindTurn's scan, with the turn's reply (TurnReply);
// promptOnly stops at the matching user message.
func scanRollout(home, thread, msgID, nonce string, promptOnly bool) (found bool, at, reply string, err error) {
	path, err := RolloutPath(home, thread)
	if err != nil || path == "" {
		return false, "", "", err
	}
	turn := ""
	err = harness.Lines(path, func(n int, line []byte) bool {
		if !strings.Contains(string(line), `"event_msg"`) {
			return true
		}
		var r rolloutLine
		if json.Unmarshal(line, &r) != nil {
			return true
		}
		p := r.Payload
		switch p.Type {
		case "item_completed":
			if p.Item.Type != "UserMessage" {
				return true
			}
			for _, c := range p.Item.Content {
				if id, nn, _, ok := guard.MatchHeader(c.Text); ok && id == msgID && nn == nonce {
					if promptOnly {
						at = path + ":" + strconv.Itoa(n)
						return false
					}
					turn = p.TurnID
				}
			}
		case "task_complete":
			noError := len(p.Error) == 0 || string(p.Error) == "null"
			if turn != "" && p.TurnID == turn && noError && p.LastAgentMessage != nil {
				at, reply = path+":"+strconv.Itoa(n), *p.LastAgentMessage
				return false
			}
		}
		return true
	})
	return at != "", at, reply, err // Lines stops without an error once at is set
}

var windowRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"model_context_window":\s*([0-9]+)`) })

// ContextWindow reads the model's context window from the end of a rollout
// (task_started and token_count carry model_context_window); 0 when unknown.
func ContextWindow(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	const tail = 256 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		f.Seek(fi.Size()-tail, io.SeekStart)
	}
	b, _ := io.ReadAll(f)
	m := windowRE().FindAllSubmatch(b, -1)
	if len(m) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(string(m[len(m)-1][1]))
	return n
}
