package sim

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/fsafe"
)

// row is one transcript line, shaped like Claude Code's JSONL rows. The
// extra field "sim" carries the token state after the row, which is what
// --resume restores.
type row struct {
	Type              string       `json:"type"`
	Subtype           string       `json:"subtype,omitempty"`
	ParentUUID        *string      `json:"parentUuid"`
	SessionID         string       `json:"sessionId"`
	UUID              string       `json:"uuid"`
	PromptID          string       `json:"promptId,omitempty"`
	Timestamp         string       `json:"timestamp"`
	Cwd               string       `json:"cwd"`
	Version           string       `json:"version"`
	IsMeta            bool         `json:"isMeta,omitempty"`
	IsCompactSummary  bool         `json:"isCompactSummary,omitempty"`
	IsAPIErrorMessage bool         `json:"isApiErrorMessage,omitempty"`
	Content           string       `json:"content,omitempty"`
	CompactMetadata   *compactMeta `json:"compactMetadata,omitempty"`
	Message           *message     `json:"message,omitempty"`
	Sim               *tokenState  `json:"sim,omitempty"`
}

type compactMeta struct {
	Trigger   string `json:"trigger"`
	PreTokens int    `json:"preTokens"`
}

type message struct {
	Role    string `json:"role"`
	Model   string `json:"model,omitempty"`
	Content any    `json:"content"` // string (user) or []textBlock (assistant)
	Usage   *usage `json:"usage,omitempty"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

func nowStamp() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

// transcriptPath is where the current session's rows go. The file is
// created by the first row, as Claude does: a session that never got a row
// cannot be resumed and its id is still free.
func (e *engine) transcriptPath() string {
	return filepath.Join(e.cfg.stateDir, "sessions", e.sessionID+".jsonl")
}

// appendRow fills in the common fields, snapshots the token state and
// appends the row with an fsync, so a crash loses at most the row in flight.
func (e *engine) appendRow(r row) {
	r.SessionID = e.sessionID
	r.UUID = newUUID()
	if e.lastUUID != "" {
		p := e.lastUUID
		r.ParentUUID = &p
	}
	r.Timestamp = nowStamp()
	r.Cwd = e.cfg.cwd
	r.Version = Version
	st := e.st
	r.Sim = &st
	e.lastUUID = r.UUID
	if err := appendJSONLine(e.transcriptPath(), r); err != nil {
		e.say("sim: transcript: " + err.Error())
	}
}

// appendJSONLine writes v as one line with O_APPEND and fsyncs it. One
// write call per line keeps concurrent writers (several sims sharing a
// state directory) from interleaving. The records carry board text and live
// in the seat's private directory, so they are private too (0600/0700).
func appendJSONLine(path string, v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := fsafe.OpenAppend(path, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// marshal is json.Marshal without HTML escaping, so "<" and ">" stay
// readable in rows and payloads, as Claude writes them.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// readRow is the reading side of row: content may be a string or blocks.
type readRow struct {
	Type             string      `json:"type"`
	Subtype          string      `json:"subtype"`
	UUID             string      `json:"uuid"`
	IsMeta           bool        `json:"isMeta"`
	IsCompactSummary bool        `json:"isCompactSummary"`
	Sim              *tokenState `json:"sim"`
	Message          *struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

func (r readRow) text() string {
	if r.Message == nil {
		return ""
	}
	var s string
	if json.Unmarshal(r.Message.Content, &s) == nil {
		return s
	}
	var blocks []textBlock
	if json.Unmarshal(r.Message.Content, &blocks) == nil {
		var parts []string
		for _, b := range blocks {
			parts = append(parts, b.Text)
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// loadTranscript restores the token state and the visible conversation of
// a session. Lines that do not parse (a torn last write) are skipped.
func (e *engine) loadTranscript() error {
	f, err := os.Open(e.transcriptPath())
	if errors.Is(err, os.ErrNotExist) {
		//lint:ignore ST1005 the simulator prints Claude Code's own message, word for word
		return fmt.Errorf("No conversation found with session ID: %s", e.sessionID)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r readRow
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		if r.Sim != nil {
			e.st = *r.Sim
		}
		if r.UUID != "" {
			e.lastUUID = r.UUID
		}
		e.history = append(e.history, displayRow(r)...)
	}
	return sc.Err()
}

// displayRow renders a stored row for the conversation area after --resume.
func displayRow(r readRow) []string {
	switch {
	case r.Type == "system" && r.Subtype == "compact_boundary":
		return []string{"✻ Conversation compacted"}
	case r.Type == "user" && !r.IsMeta && !r.IsCompactSummary:
		t := r.text()
		if t == interrupts {
			return []string{"  ⎿  Interrupted · What should Claude do instead?"}
		}
		return []string{"> " + firstLine(t)}
	case r.Type == "assistant":
		return replyLines(r.text())
	}
	return nil
}

// replyLines indents an assistant message the way Claude's transcript view
// does, so no history line starts with the input prompt "> ".
func replyLines(text string) []string {
	var out []string
	for i, l := range strings.Split(text, "\n") {
		if i == 0 {
			out = append(out, "⏺ "+l)
		} else {
			out = append(out, "  "+l)
		}
	}
	return out
}

// requestRow is one line of the request log: one per thing that reached
// the simulated model, or was dispatched instead of reaching it. Tests count
// exactly-once delivery from it.
type requestRow struct {
	Time           string            `json:"time"`
	SessionID      string            `json:"session_id"`
	PromptID       string            `json:"prompt_id"`
	Kind           string            `json:"kind"`
	NewInput       string            `json:"new_input"`
	Injected       string            `json:"injected"`
	Mentions       []string          `json:"mentions"`
	MentionContent map[string]string `json:"mention_content"`
	Model          string            `json:"model"`
	HistoryTurns   int               `json:"history_turns"`
	Usage          usage             `json:"usage"`
	Error          string            `json:"error,omitempty"`
	Output         string            `json:"output,omitempty"`
	ExitCode       *int              `json:"exit_code,omitempty"`
	Cwd            string            `json:"cwd"`
	Pid            int               `json:"pid"`
}

// logRequest appends a request row, filling the fields common to all kinds.
func (e *engine) logRequest(r requestRow) {
	r.Time = time.Now().UTC().Format(time.RFC3339Nano)
	r.SessionID = e.sessionID
	r.Model = e.cfg.model
	r.Cwd = e.cfg.cwd
	r.Pid = os.Getpid()
	if r.Mentions == nil {
		r.Mentions = []string{}
	}
	if r.MentionContent == nil {
		r.MentionContent = map[string]string{}
	}
	path := filepath.Join(e.cfg.stateDir, "requests.jsonl")
	if err := appendJSONLine(path, r); err != nil {
		e.say("sim: request log: " + err.Error())
	}
}
