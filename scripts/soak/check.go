package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/fsafe"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/state"
)

// turnRow is one row of a simulator's request log that reached the model as a
// turn for a pantty message (its new input carries the guard header).
type turnRow struct {
	seat, session, prompt string
	id, nonce             string
	resubmit              int
	at                    time.Time
	completed             bool // the transcript has the turn's reply: no crash cut it short
}

// modelView is everything that reached the model, read from the simulators'
// own records, never from pantty's.
type modelView struct {
	turns    map[string][]turnRow // message id → its turn rows, in log order
	refused  int                  // turn rows refused by the provider (an "error" field)
	foreign  []string             // turn rows whose header is not a pantty message's
	sessions map[string]map[string]bool
	compacts int
}

// readModelView reads every seat's request log and transcripts.
func (w *world) readModelView() (modelView, error) {
	v := modelView{turns: map[string][]turnRow{}, sessions: map[string]map[string]bool{}}
	for _, r := range w.seats {
		s := w.seat(r)
		v.sessions[r.name] = map[string]bool{}
		replies, err := transcriptReplies(filepath.Join(s.HarnessDir(), "sessions"))
		if err != nil {
			return v, err
		}
		f, err := os.Open(filepath.Join(s.HarnessDir(), "requests.jsonl"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return v, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for n := 1; sc.Scan(); n++ {
			var row struct {
				Time      time.Time `json:"time"`
				SessionID string    `json:"session_id"`
				PromptID  string    `json:"prompt_id"`
				Kind      string    `json:"kind"`
				NewInput  string    `json:"new_input"`
				Error     string    `json:"error"`
			}
			if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
				// The simulator appends each row in one write with O_APPEND: a
				// torn row would be a finding in itself.
				f.Close()
				return v, fmt.Errorf("%s request log line %d: %v", r.name, n, err)
			}
			v.sessions[r.name][row.SessionID] = true
			switch row.Kind {
			case "compact", "compact-blocked":
				v.compacts++
				continue
			case "turn":
			default:
				continue
			}
			if row.Error != "" {
				v.refused++
				continue
			}
			id, nonce, resubmit, ok := guard.MatchHeader(row.NewInput)
			if !ok {
				v.foreign = append(v.foreign, fmt.Sprintf("%s: %.60q", r.name, row.NewInput))
				continue
			}
			v.turns[id] = append(v.turns[id], turnRow{seat: r.name, session: row.SessionID, prompt: row.PromptID,
				id: id, nonce: nonce, resubmit: resubmit, at: row.Time, completed: replies[row.SessionID+"/"+row.PromptID]})
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return v, err
		}
	}
	return v, nil
}

// transcriptReplies returns session/prompt keys of every turn whose reply the
// transcripts hold (an assistant row that is not a provider's error message).
func transcriptReplies(dir string) (map[string]bool, error) {
	out := map[string]bool{}
	ents, err := fsafe.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		sess, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var row struct {
				Type     string `json:"type"`
				PromptID string `json:"promptId"`
				APIError bool   `json:"isApiErrorMessage"`
			}
			if json.Unmarshal(sc.Bytes(), &row) == nil && row.Type == "assistant" && !row.APIError && row.PromptID != "" {
				out[sess+"/"+row.PromptID] = true
			}
		}
		f.Close()
	}
	return out, nil
}

// verdict is the count of every sent message against what reached the model.
type verdict struct {
	sent              int
	processedOnce     int
	processedResubmit int            // a crashed turn, then exactly one marked resubmission
	failed            map[string]int // by reason
	failedButRan      []string       // failed although the model completed a turn for it
	lost              []string
	duplicates        []string
	stuck             []string
	misrouted         []string
	sessionsChanged   []string
	foreign           []string
	refusedTurns      int
}

// judge applies the rule of docs/reliability.md ("Counting exactly once") to
// every message in the senders' own lists.
func (w *world) judge(l *ledger, v modelView) verdict {
	out := verdict{failed: map[string]int{}, refusedTurns: v.refused, foreign: v.foreign}
	for _, r := range w.seats {
		for sess := range v.sessions[r.name] {
			if sess != r.session {
				out.sessionsChanged = append(out.sessionsChanged, fmt.Sprintf("%s: a turn on session %s, not the original %s", r.name, sess, r.session))
			}
		}
		s := w.seat(r)
		if cur, err := s.SessionFile().Read(); err != nil || cur.ID != r.session {
			out.sessionsChanged = append(out.sessionsChanged, fmt.Sprintf("%s: session.toml says %s (%v), not the original %s", r.name, cur.ID, err, r.session))
		}
	}
	l.mu.Lock()
	sent := append([]sentMsg{}, l.sent...)
	l.mu.Unlock()
	out.sent = len(sent)
	known := map[string]bool{}
	for _, m := range sent {
		known[m.id] = true
		rows := v.turns[m.id]
		s, _ := state.Open(w.home, m.seat)
		st, err := s.ReadStatus(m.id)
		if _, serr := s.ReadStored(m.id); serr != nil {
			out.lost = append(out.lost, fmt.Sprintf("%s: stored by send, but not in %s's inbox: %v", m.id, m.seat, serr))
			continue
		}
		if err != nil {
			out.lost = append(out.lost, fmt.Sprintf("%s: status unreadable: %v", m.id, err))
			continue
		}
		completed := 0
		for _, t := range rows {
			if t.seat != m.seat {
				out.misrouted = append(out.misrouted, fmt.Sprintf("%s: sent to %s, reached the model on %s", m.id, m.seat, t.seat))
			}
			if t.completed {
				completed++
			}
		}
		desc := describeRows(rows)
		if inbox.Final(st.State) {
			// The directory is the state: a settled message has one status
			// file, in its state's directory.
			want := s.ProcessedDir()
			if st.State == inbox.StateFailed {
				want = s.FailedDir()
			}
			var where []string
			for _, d := range s.StatusDirs() {
				if _, err := os.Lstat(filepath.Join(d, m.id+".toml")); err == nil {
					where = append(where, d)
				}
			}
			if len(where) != 1 || where[0] != want {
				out.stuck = append(out.stuck, fmt.Sprintf("%s on %s: %s, but its status files are in %v, not only in %s", m.id, m.seat, st.State, where, want))
			}
		}
		sanctioned := len(rows) == 2 && !rows[0].completed && rows[0].resubmit == 0 && rows[1].resubmit == 1 && st.Resubmits == 1
		switch {
		case !inbox.Final(st.State):
			out.stuck = append(out.stuck, fmt.Sprintf("%s on %s: still %s (%s) after settling; turns: %s", m.id, m.seat, st.State, st.Reason, desc))
		case completed > 1 || len(rows) > 2 || len(rows) == 2 && !sanctioned:
			out.duplicates = append(out.duplicates, fmt.Sprintf("%s on %s: %s, status %s resubmits=%d; turns: %s", m.id, m.seat, st.State, st.Reason, st.Resubmits, desc))
		case st.State == inbox.StateProcessed && completed == 0:
			out.lost = append(out.lost, fmt.Sprintf("%s on %s: processed, but no turn of it completed at the model; turns: %s", m.id, m.seat, desc))
		case st.State == inbox.StateProcessed && len(rows) == 2:
			out.processedResubmit++
		case st.State == inbox.StateProcessed:
			out.processedOnce++
		case st.Reason == "":
			out.lost = append(out.lost, fmt.Sprintf("%s on %s: failed without a reason", m.id, m.seat))
		default:
			out.failed[st.Reason]++
			if completed > 0 {
				out.failedButRan = append(out.failedButRan, fmt.Sprintf("%s on %s: failed %s (%s), but the model completed its turn; turns: %s", m.id, m.seat, st.Reason, st.Detail, desc))
			}
		}
	}
	for id := range v.turns {
		if !known[id] {
			out.foreign = append(out.foreign, id+": reached the model but no sender stored it")
		}
	}
	sort.Strings(out.foreign)
	return out
}

func describeRows(rows []turnRow) string {
	if len(rows) == 0 {
		return "none"
	}
	var parts []string
	for _, t := range rows {
		state := "completed"
		if !t.completed {
			state = "no reply (crashed)"
		}
		parts = append(parts, fmt.Sprintf("[%s resubmit=%d %s %s]", t.at.Format("15:04:05.000"), t.resubmit, t.prompt[:min(8, len(t.prompt))], state))
	}
	return strings.Join(parts, " ")
}

// modes walks the state root and counts files and directories by permission:
// every one must be 0600 / 0700, and no symlink may exist.
type modeCount struct {
	files, dirs int
	bad         []string
	symlinks    []string
}

func walkModes(root string) modeCount {
	var c modeCount
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return nil
		}
		switch m := fi.Mode(); {
		case m&fs.ModeSymlink != 0:
			c.symlinks = append(c.symlinks, p)
		case m.IsDir():
			c.dirs++
			if m.Perm() != 0o700 {
				c.bad = append(c.bad, fmt.Sprintf("%s %v", p, m.Perm()))
			}
		case m.IsRegular():
			c.files++
			if m.Perm() != 0o600 {
				c.bad = append(c.bad, fmt.Sprintf("%s %v", p, m.Perm()))
			}
		default:
			c.bad = append(c.bad, fmt.Sprintf("%s: not a file or directory (%v)", p, m))
		}
		return nil
	})
	return c
}
