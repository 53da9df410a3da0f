// Package claudecode is pantty's adapter for Claude Code (harness "claude-code"):
// how to launch the real `claude` in a pane, where its session record lives, how
// to find a finished turn in its transcript, and how its busy footer looks. Every
// rule here was measured against Claude Code 2.1.328 in tmux 3.3a; docs/claude-code.md
// says what was measured and how to measure a new version again.
package claudecode

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/harness/standinkit"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/panetext"
	"github.com/pantty/pantty/seat/state"
)

// DefaultBinary is the harness command when seat.toml names none: `claude`,
// looked up on the harness's PATH.
const DefaultBinary = "claude"

// Adapter drives Claude Code as a resident seat.
type Adapter struct{}

// Name is the harness name in seat.toml.
func (Adapter) Name() string { return "claude-code" }

// ownFlags are the flags pantty sets itself on every launch; seat.toml's args may
// not repeat them (a second --resume or --settings would pick another session or
// drop pantty's hooks), nor turn the resident TUI into one-shot print mode.
var ownFlags = []string{"--settings", "--session-id", "--resume", "-r", "--continue", "-c",
	"--fork-session", "--print", "-p"}

var uuidRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
})

// Argv is `claude --settings FILE --session-id ID` on a first launch and the
// same with `--resume ID` later: the whole flag set is given again on resume,
// because Claude Code does not remember the settings, model or permission mode of
// a resumed session. --session-id lets pantty choose the id before the launch.
func (Adapter) Argv(l harness.Launch) ([]string, error) {
	if !uuidRE().MatchString(l.SessionID) {
		return nil, fmt.Errorf("claude-code: session id %q is not a lowercase UUID (claude refuses it)", l.SessionID)
	}
	if err := harness.RefuseOwnArgs("claude-code", l.Config.Args, ownFlags, "the session and settings flags"); err != nil {
		return nil, err
	}
	argv := append([]string{l.Binary(DefaultBinary), "--settings", l.Settings}, l.SessionArgs("--permission-mode")...)
	return append(argv, l.Config.Args...), nil
}

// Env turns off what a seat must not do by itself: update its own binary in the
// middle of a session, and reach out to anything but the model API (telemetry,
// error reports, release notes). Nested-session markers (CLAUDECODE, …) are never
// set here, and HarnessEnv strips them from what the caller passes.
func (Adapter) Env(state.Seat, config.Config) map[string]string {
	return map[string]string{
		"DISABLE_AUTOUPDATER":                      "1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
	}
}

// harnessVar is a variable as the harness will see it: seat.toml's env wins,
// then a caller variable the seat passes (HOME always passes).
func harnessVar(c config.Config, k string, passes bool) string {
	if v, ok := c.Env[k]; ok {
		return v
	}
	if !passes {
		for _, p := range c.PassEnv {
			passes = passes || p == k
		}
	}
	if passes {
		return os.Getenv(k)
	}
	return ""
}

// ConfigDir is Claude Code's state directory for the seat: $CLAUDE_CONFIG_DIR
// when the seat sets or passes it, else ~/.claude, where ~ is the seat's HOME
// (seat.toml's env HOME, else the caller's).
func ConfigDir(c config.Config) (string, error) {
	if d := harnessVar(c, "CLAUDE_CONFIG_DIR", false); d != "" {
		return d, nil
	}
	home := harnessVar(c, "HOME", true)
	if home == "" {
		return "", errors.New("claude-code: HOME is not set for the harness, so its transcripts cannot be found")
	}
	return filepath.Join(home, ".claude"), nil
}

var nonAlnumRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9]`) })

// ProjectDir is the directory name Claude Code files a workdir's sessions
// under: the path with every non-alphanumeric character replaced by '-'
// ("/tmp/w.x" → "-tmp-w-x").
func ProjectDir(workdir string) string { return nonAlnumRE().ReplaceAllString(workdir, "-") }

// TranscriptPath finds the session's transcript: projects/<ProjectDir>/<id>.jsonl
// under ConfigDir, or, when that file does not exist, the same file name in any
// project directory (a workdir reached through a symlink, or a path long enough
// for Claude Code to shorten, is filed under another name; the session id is a
// random UUID, so the name alone is unambiguous). exists=false when there is none.
func TranscriptPath(c config.Config, sessionID string) (path string, exists bool, err error) {
	if !uuidRE().MatchString(sessionID) {
		return "", false, fmt.Errorf("claude-code: session id %q is not a UUID", sessionID)
	}
	dir, err := ConfigDir(c)
	if err != nil {
		return "", false, err
	}
	projects := filepath.Join(dir, "projects")
	want := filepath.Join(projects, ProjectDir(c.Workdir), sessionID+".jsonl")
	if ok, err := isFile(want); ok || err != nil {
		return want, ok, err
	}
	ents, err := os.ReadDir(projects)
	if errors.Is(err, fs.ErrNotExist) {
		return want, false, nil
	}
	if err != nil {
		return want, false, err
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(projects, e.Name(), sessionID+".jsonl")
		if ok, err := isFile(p); ok || err != nil {
			return p, ok, err
		}
	}
	return want, false, nil
}

func isFile(p string) (bool, error) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return fi.Mode().IsRegular(), nil
}

// SessionExists: the transcript decides, and what is in it. Measured on 2.1.328:
// claude creates the transcript at the session's first prompt with three
// metadata rows (mode, permission-mode, atis-latch) and writes the conversation
// rows in batches, 0–150 ms after the Stop hook (about 1 s after the first
// prompt). `--resume` of an id whose transcript holds no conversation fails
// ("No conversation found with session ID"), and `--session-id` of an id whose
// transcript file exists fails too ("Session ID … is already in use"), so a
// claude killed before its first flush leaves an id that neither flag accepts.
//
// So: no file → false (first launch); a user or assistant row → true (resume);
// a file with neither → it holds nothing of the conversation, and it is set
// aside (renamed to <id>.jsonl.no-conversation-<unix ns>, kept for a person to
// look at) so that `--session-id` can start the same id afresh → false. The
// driver asks only when it is about to launch, with no claude alive on the id.
func (Adapter) SessionExists(_ state.Seat, c config.Config, sessionID string) (bool, error) {
	path, ok, err := TranscriptPath(c, sessionID)
	if err != nil || !ok {
		return false, err
	}
	conv, err := hasConversation(path)
	if err != nil || conv {
		return conv, err
	}
	aside := fmt.Sprintf("%s.no-conversation-%d", path, time.Now().UnixNano())
	if err := os.Rename(path, aside); err != nil {
		return false, fmt.Errorf("claude-code: %s holds no conversation (claude would refuse --resume and --session-id): set it aside: %v", path, err)
	}
	return false, nil
}

// hasConversation reports whether a transcript holds a user or assistant row.
func hasConversation(path string) (bool, error) {
	found := false
	err := harness.Lines(path, func(_ int, line []byte) bool {
		if !jsonHasType(line, "user", "assistant") {
			return true
		}
		var r row
		found = json.Unmarshal(line, &r) == nil && (r.Type == "user" || r.Type == "assistant")
		return !found
	})
	return found, err
}

// row is the part of a transcript line FindTurn reads.
type row struct {
	Type              string `json:"type"`
	Subtype           string `json:"subtype"`
	PromptID          string `json:"promptId"`
	IsSidechain       bool   `json:"isSidechain"`
	IsAPIErrorMessage bool   `json:"isApiErrorMessage"`
	Message           struct {
		ID      string          `json:"id"`
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// texts is a row's content: a string, or the text of its text blocks (an
// assistant row's tool calls and thinking left out).
func (r row) texts() []string { return standinkit.Texts(r.Message.Content, "text") }

// FindTurn scans the session's transcript for a finished model turn of the
// submission with this id and nonce. Measured row shapes (2.1.328): the prompt is
// a `user` row with `promptId` whose content is the prompt as UserPromptSubmit
// reported it (a long paste wrapped in <pasted_content>); the model's answer is an
// `assistant` row (no promptId) further down; a finished turn then gets a `system`
// row `stop_hook_summary` (the Stop hooks ran) and `turn_duration`. An interrupt
// leaves a user row "[Request interrupted by user]" with the same promptId and no
// such system row; an API error leaves a synthetic assistant row
// (isApiErrorMessage, model "<synthetic>"). A turn is found when, after the
// matching user row and before the next prompt, a real assistant row is followed
// by one of those system rows. Sidechain (subagent) rows are skipped.
func (Adapter) FindTurn(_ state.Seat, c config.Config, sessionID, msgID, nonce string) (bool, string, error) {
	found, at, _, err := scanTranscript(c, sessionID, msgID, nonce, false)
	return found, at, err
}

// TurnReply is the reply of the submission's finished turn as the
// transcript holds it: the text of the turn's last real assistant message
// (its rows share a message id: one row per content block; "" when the turn
// is not found finished); harness.Capabilities.TurnReply.
func TurnReply(_ state.Seat, c config.Config, sessionID, msgID, nonce string) (string, error) {
	_, _, reply, err := scanTranscript(c, sessionID, msgID, nonce, false)
	return reply, err
}

// FindPrompt finds the submission's user row (matching id and nonce) whether
// or not its turn finished (harness.Capabilities.FindPrompt).
func (Adapter) FindPrompt(_ state.Seat, c config.Config, sessionID, msgID, nonce string) (bool, string, error) {
	found, at, _, err := scanTranscript(c, sessionID, msgID, nonce, true)
	return found, at, err
}

// scanTranscript is FindTurn's scan, with the turn's reply (TurnReply);
// promptOnly stops at the matching user row.
func scanTranscript(c config.Config, sessionID, msgID, nonce string, promptOnly bool) (found bool, at, reply string, err error) {
	path, ok, err := TranscriptPath(c, sessionID)
	if err != nil || !ok {
		return false, "", "", err
	}
	prompt := ""      // promptId of the matching user row, while its turn runs
	answered := false // a real assistant row came for it
	message := ""     // the id of the last real assistant message, whose text reply holds
	err = harness.Lines(path, func(n int, line []byte) bool {
		// Most rows are large attachments and API snapshots; skip the ones that
		// cannot matter before decoding them.
		if !jsonHasType(line, "user", "assistant", "system") {
			return true
		}
		var r row
		if json.Unmarshal(line, &r) != nil || r.IsSidechain {
			return true
		}
		switch r.Type {
		case "user":
			if r.PromptID == "" || r.PromptID == prompt {
				return true // a tool result, or the interrupt note of the same prompt
			}
			prompt, answered, reply, message = "", false, "", ""
			for _, t := range r.texts() {
				if id, nn, _, ok := guard.MatchHeader(t); ok && id == msgID && nn == nonce {
					if promptOnly {
						at = path + ":" + strconv.Itoa(n)
						return false
					}
					prompt = r.PromptID
				}
			}
		case "assistant":
			if prompt != "" && !r.IsAPIErrorMessage && r.Message.Model != "<synthetic>" {
				answered = true
				if r.Message.ID != message {
					message, reply = r.Message.ID, "" // a later message is a later step
				}
				if text := strings.Join(r.texts(), "\n"); text != "" {
					reply = strings.TrimPrefix(reply+"\n"+text, "\n")
				}
			}
		case "system":
			if prompt != "" && answered && (r.Subtype == "stop_hook_summary" || r.Subtype == "turn_duration") {
				at = path + ":" + strconv.Itoa(n)
				return false
			}
		}
		return true
	})
	if at == "" {
		reply = ""
	}
	return at != "", at, reply, err // Lines stops without an error once at is set
}

// jsonHasType is a cheap pre-filter: does the row's top-level "type" look like
// one of these? (A false positive is decoded and checked properly.)
func jsonHasType(line []byte, types ...string) bool {
	s := string(line)
	for _, t := range types {
		if strings.Contains(s, `"type":"`+t+`"`) {
			return true
		}
	}
	return false
}

// Busy reads the footer: while a turn (or a compaction) runs, Claude Code's
// footer line under the input box says "esc to interrupt", and the text goes
// away within about 120 ms of the turn's end or of an interrupt. Only the lines
// below the input box are read, so a reply quoting the phrase is not "busy".
func (Adapter) Busy(screen string) bool {
	return strings.Contains(footer(screen), "esc to interrupt")
}

// footer is the screen below the input box's last rule (the status line and the
// mode line), or the last three lines when no rule is visible.
func footer(screen string) string {
	lines := strings.Split(strings.TrimRight(screen, "\n "), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if isRule(lines[i]) {
			return strings.Join(lines[i+1:], "\n")
		}
	}
	return strings.Join(lines[max(0, len(lines)-3):], "\n")
}

func isRule(l string) bool {
	t := strings.TrimSpace(l)
	return len(t) >= 3*len("─") && strings.Trim(t, "─") == ""
}

// InputReady (harness.Capabilities.InputReady) is the pane showing the input box: a "❯" line
// between two rules. Claude Code fires SessionStart before that (measured about
// 260 ms before the box, 170 ms before it enables bracketed paste), and a paste
// sent in that window is not bracketed and lost its Enter.
func (Adapter) InputReady(screen string) bool {
	box, ok := panetext.BetweenLastRules(screen, isRule)
	return ok && len(box) > 0 && strings.HasPrefix(box[0], "❯")
}

// Composer (harness.Capabilities.Composer) is the input box's text; see Composer. The
// placeholder hint counts as empty.
func (Adapter) Composer(screen string) (string, bool) {
	text, ok := Composer(screen)
	if slices.Contains(Placeholders, text) {
		text = ""
	}
	return text, ok
}

// Composer returns the text in Claude Code's input box, read from the pane: the
// lines between the last two rules, without the "❯" prompt, the (non-breaking)
// space after it and the continuation indent. ok is false when no input box is
// visible. A dimmed placeholder (after an API error: "Resend your message to try
// again") cannot be told from typed text in a plain capture; it is returned as
// is (Placeholder).
func Composer(screen string) (text string, ok bool) {
	box, ok := panetext.BetweenLastRules(screen, isRule)
	if !ok {
		return "", false
	}
	return panetext.BoxText(box, "❯"), true
}

// Placeholder is the input box's dimmed hint after a turn ended in an API error
// the harness gave up retrying (a 429); it is not a draft and needs no clearing.
const Placeholder = "Resend your message to try again"

// Placeholders are every dimmed hint Claude Code 2.1.328 shows in an empty
// input box after a failed turn: Placeholder, and after a 401 or a billing
// refusal "Once fixed, resend your message" (measured 2026-12-05 on the
// outage e2e: read as a person's draft, it held the queue for good once keys
// went only into a free box).
var Placeholders = []string{Placeholder, "Once fixed, resend your message"}

// Commands is the command door's allow-list:
//   - compact: pantty's compaction cycle (PreCompact, summarisation request,
//     SessionStart source "compact", PostCompact; the session id stays);
//   - context: the local context breakdown (count_tokens requests only, no
//     model turn, no hook).
//
// Not clear: /clear ends the session and starts another with a new session id
// (SessionEnd reason "clear", SessionStart source "clear"), so the seat's
// evidence would no longer bind to session.toml. A fresh context is a new
// generation that pantty launches itself.
func (Adapter) Commands() []string { return []string{"compact", "context"} }

// Facts: on this path a leading '/' ran a slash command and a leading '!' a shell
// command (docs/claude-code.md, "Dispatch"); the shipped predicate covers both.
func (Adapter) Facts() guard.DispatchFacts { return guard.DefaultDispatchFacts }

// PasteSettle is the measured 150 ms between paste and Enter: UserPromptSubmit
// came 40–100 ms after Enter with or without it, and other versions lost an
// Enter that arrived inside the paste.
func (Adapter) PasteSettle() config.Duration {
	return config.Duration{Duration: 150 * time.Millisecond}
}

// CommandAnswer (harness.Capabilities.CommandAnswer) reads the command's output from the
// session's transcript: Claude Code 2.1.328 records a slash command as a row
// naming it ("<command-name>/compact</command-name>") and its output as a
// system "local_command" row ("<local-command-stdout>Not enough messages to
// compact.</local-command-stdout>"), 140 ms after the command here (measured
// 2026-12-03, docs/claude-code.md). An accepted /compact records "Compacted"
// only after its PreCompact hook, which the driver takes first.
func (Adapter) CommandAnswer(_ state.Seat, c config.Config, sessionID string, cmd guard.Command, since time.Time) (string, bool, error) {
	path, ok, err := TranscriptPath(c, sessionID)
	if err != nil || !ok {
		return "", false, err
	}
	return hookwire.LocalCommandAnswer(path, cmd.Name(), since)
}

// Caps lists what Claude Code can do beyond the required methods.
func (a Adapter) Caps() harness.Capabilities {
	return harness.Capabilities{FindPrompt: a.FindPrompt, TurnReply: TurnReply, InputReady: a.InputReady, Composer: a.Composer,
		CommandAnswer: a.CommandAnswer, ProbeIsolation: a.ProbeIsolation, Secrets: a.Secrets, PrepareSeatHome: a.PrepareSeatHome, HomeUnprepared: a.HomeUnprepared,
		Measure: a.Measure, Binary: DefaultBinary, PasteQuiet: PasteQuiet}
}

// PasteQuiet (harness.Capabilities.PasteQuiet): Claude Code 2.1.328 draws a
// bracketed paste in its box ("[Pasted text #1 +4 lines]") only once an
// Enter submits it. Measured 2026-12-06 (seat/measure's
// TestPasteCommitTiming, 5-line paste, machine load average 18 to 40): an
// Enter sent once the box showed the paste and the pane had been quiet 0,
// 10 or 30 ms submitted 60 of 60 times (30 of them at 10 ms); the box
// showed the paste 12–48 ms (median) after it, at worst 396 ms, so the
// fixed 150 ms settle sent some Enters before the paste showed, where this
// waits for it. One Enter sent 1 ms after a paste, not looking, on the
// first paste of a session did not submit (nor did the next, within 10 s);
// this wait never sends Enter before the box shows the paste.
const PasteQuiet = 10 * time.Millisecond
