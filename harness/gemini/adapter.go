// Package gemini is pantty's adapter for Gemini CLI (harness "gemini-cli"):
// how to launch the real `gemini` TUI in a pane with a per-seat
// GEMINI_CLI_HOME, how its hooks reach `pantty hook --gemini-hook`, where its
// session record (the chat files) lives, how to find a finished turn in it,
// how its pane shows a running turn, and how a compression is seen and its
// handoff re-injected. Every rule here was measured against Gemini CLI 0.61.0
// in tmux 3.3a against a loopback Gemini API stand-in (harness/gemini/standin);
// docs/gemini.md says what was measured and how.
package gemini

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/state"
)

// DefaultBinary is the harness command when seat.toml names none: `gemini`,
// looked up on the harness's PATH.
const DefaultBinary = "gemini"

// Adapter drives the Gemini CLI TUI as a resident seat.
type Adapter struct{}

// Name is the harness name in seat.toml.
func (Adapter) Name() string { return "gemini-cli" }

// ownArgs are the arguments pantty sets itself; seat.toml's args may not
// repeat them (another session, a one-shot prompt, or a mode that approves
// every tool call by itself).
var ownArgs = []string{"--session-id", "--resume", "-r", "--session-file", "--prompt", "-p", "--prompt-interactive", "-i",
	"--yolo", "-y", "--acp", "--experimental-acp", "--worktree", "-w", "--delete-session", "--list-sessions"}

var uuidRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
})

// Argv prepares the seat's GEMINI_CLI_HOME (PrepareHome: settings and hooks)
// and builds `gemini --session-id ID` on a first launch and `gemini --resume
// ID` later: pantty chooses the id (measured: the SessionStart payload and
// the chat file carry it) and a resume by id keeps it (SessionStart source
// "resume", same session_id, a new chat file).
func (Adapter) Argv(l harness.Launch) ([]string, error) {
	if !uuidRE().MatchString(l.SessionID) {
		return nil, fmt.Errorf("gemini-cli: session id %q is not a lowercase UUID", l.SessionID)
	}
	if err := harness.RefuseOwnArgs("gemini-cli", l.Config.Args, ownArgs, "the session and the mode"); err != nil {
		return nil, err
	}
	if err := PrepareHome(l.Seat, l.Config, l.Pantty); err != nil {
		return nil, err
	}
	argv := append([]string{l.Binary(DefaultBinary)}, l.SessionArgs("--approval-mode")...)
	return append(argv, l.Config.Args...), nil
}

// Env points Gemini CLI at the seat's own GEMINI_CLI_HOME, and HOME there
// too (seat.toml's env HOME still wins). Measured on Gemini CLI 0.61.0,
// 2026-12-04: with GEMINI_CLI_HOME set and HOME the person's (/root on the lab
// machine) the CLI ran none of its hooks, in 5 of 5 launches, while with HOME
// empty or equal to GEMINI_CLI_HOME it ran them in every launch; the cause was
// not found (docs/gemini.md). It also wrote projects.json temp files into
// HOME/.gemini despite GEMINI_CLI_HOME. The model's shell therefore sees the
// seat's home, not the person's.
func (Adapter) Env(s state.Seat, c config.Config) map[string]string {
	return map[string]string{"GEMINI_CLI_HOME": Home(s, c), "HOME": Home(s, c), SystemSettingsEnv: SystemSettingsPath(s)}
}

// SessionExists: Gemini writes the chat file when the session starts; a
// resume needs one.
func (Adapter) SessionExists(s state.Seat, c config.Config, id string) (bool, error) {
	if id == "" {
		return false, nil
	}
	files, err := ChatFiles(Home(s, c), id)
	return len(files) > 0, err
}

// FindTurn looks in the chat files for the submission's prompt followed by a
// reply of the model.
func (Adapter) FindTurn(s state.Seat, c config.Config, sessionID, msgID, nonce string) (bool, string, error) {
	return findSubmission(Home(s, c), sessionID, msgID, nonce, true)
}

// FindPrompt looks in the chat files for the submission's prompt, answered or
// not (harness.Capabilities.FindPrompt).
func (Adapter) FindPrompt(s state.Seat, c config.Config, sessionID, msgID, nonce string) (bool, string, error) {
	return findSubmission(Home(s, c), sessionID, msgID, nonce, false)
}

// lastRule is the index of the input box's top rule (a line of "─"), -1 if none.
func lastRule(lines []string) int {
	for i := len(lines) - 1; i >= 0; i-- {
		t := strings.TrimSpace(lines[i])
		if len(t) >= 3*len("─") && strings.Trim(t, "─") == "" {
			return i
		}
	}
	return -1
}

// Busy reads the line above the input box: while a turn runs (thinking,
// streaming, running hooks) it ends "(esc to cancel, 2s)"; idle, it is
// "? for shortcuts" or empty (measured). Only that line counts, so a reply
// quoting the phrase is not "busy".
func (Adapter) Busy(screen string) bool {
	lines := strings.Split(screen, "\n")
	r := lastRule(lines)
	if r < 1 {
		return strings.Contains(screen, "esc to cancel")
	}
	return strings.Contains(lines[r-1], "esc to cancel")
}

// boxPrefix is the input box's first-line prompt at the start of line, ""
// when it is none: " > ", or " * " with --approval-mode yolo, which Gemini CLI
// 0.61.0 draws under a "YOLO Ctrl+Y" line between the rule and the box
// (measured 2026-12-05, testdata/screen-yolo.txt).
func boxPrefix(line string) string {
	for _, p := range []string{" > ", " * "} {
		if strings.HasPrefix(line, p) {
			return p
		}
	}
	return ""
}

// box finds the input box in the pane: the screen's lines and the box's
// span, from the " > " line (boxPrefix) at most three lines under the rule (start) to the end of its
// continuation lines (end); ok=false when no box is visible.
func box(screen string) (lines []string, start, end int, ok bool) {
	lines = strings.Split(strings.TrimRight(screen, "\n"), "\n")
	r := lastRule(lines)
	if r < 0 {
		return lines, 0, 0, false
	}
	start = -1
	for i := r + 1; i < len(lines) && i <= r+3; i++ {
		if boxPrefix(lines[i]) != "" {
			start = i
			break
		}
	}
	if start < 0 {
		return lines, 0, 0, false
	}
	end = start + 1
	for end < len(lines) && strings.HasPrefix(lines[end], "   ") {
		end++
	}
	return lines, start, end, true
}

// InputReady (harness.Capabilities.InputReady) is the input box under its
// rule. A line "Executing Hook(s): …" above the rule does not make it
// unready: Gemini CLI 0.61.0 keeps a hook on that line for 3 s from its
// start whatever the hook takes (WARNING_PROMPT_DURATION_MS, a display
// timer in its bundle's useHookDisplayState; no setting hides it:
// hooksConfig.notifications is read only for the line's width), so after
// a turn's end the CLI is idle and takes a paste and its Enter while the
// line stays (TestQueuedMessagesFollowEachOtherAtOnce). The resume's
// redraw, which that line once stood for, is waited out by
// RedrawAfterStart.
func (Adapter) InputReady(screen string) bool {
	_, _, _, ok := box(screen)
	return ok
}

// RedrawAfterStart is the quiet time after SessionStart before the input box
// counts (harness.Capabilities.RedrawAfterStart): a paste 1 s after a resume's
// SessionStart reached the CLI in 3 of 3 launches, at 0 s in 0 of 4; 1.5 s
// leaves room for a loaded machine.
const RedrawAfterStart = 1500 * time.Millisecond

// Placeholder is the empty input box's dimmed hint.
const Placeholder = "Type your message or @path/to/file"

// Composer (harness.Capabilities.Composer) returns the text in the input box: the
// " > " line and its continuation lines (indented three spaces). The
// placeholder counts as empty. Gemini does not put a cancelled prompt back
// into the box (measured).
func (Adapter) Composer(screen string) (string, bool) {
	all, start, end, ok := box(screen)
	if !ok {
		return "", false
	}
	var out []string
	for i, l := range all[start:end] {
		if i == 0 {
			l = strings.TrimPrefix(l, boxPrefix(l))
		} else {
			l = strings.TrimPrefix(l, "   ")
		}
		out = append(out, strings.TrimRight(l, " \u00a0"))
	}
	text := strings.TrimSpace(strings.Join(out, "\n"))
	if text == Placeholder {
		return "", true
	}
	return text, true
}

// Commands is the command door's allow-list: compact (Gemini's /compact is an
// alias of /compress: PreCompress manual, the summary requests, the history
// replaced; the session id stays). Not clear or chat: another session.
func (Adapter) Commands() []string { return []string{"compact"} }

// CommandWords: the door's compact is sent as Gemini's own /compress. Its
// /compact is an alias the completion list does not show (it lists
// "compress"), so CommandSettled could never see /compact settled.
var CommandWords = map[string]string{"compact": "compress"}

// CommandSettled (harness.Capabilities.CommandSettled) is the pane showing the
// input box holding exactly text, and under it either no completion list or
// one whose first entry is text's own command. For about 50 ms after a paste
// of a slash command Gemini CLI 0.61.0 still shows the whole list (41
// entries, "(0/41)"), filtered only later; Enter then takes the selected
// entry, and under load a pasted /compact ran /clear (measured 2026-12-04).
func (Adapter) CommandSettled(screen, text string) bool {
	lines, start, _, ok := box(screen)
	if !ok || strings.TrimSpace(strings.TrimPrefix(lines[start], boxPrefix(lines[start]))) != text {
		return false
	}
	word, _, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	for _, l := range lines[start+1:] {
		t := strings.TrimSpace(l)
		switch {
		case t == "":
			continue
		case strings.HasPrefix(l, " workspace ("):
			return true
		case strings.HasPrefix(t, "("), strings.HasPrefix(t, "▼"), strings.HasPrefix(t, "▲"):
			return false // a list still scrolling: more than one entry
		default:
			first, _, _ := strings.Cut(t, " ")
			return first == word
		}
	}
	return true
}

// BareCommands: /compress takes no instructions.
func (Adapter) BareCommands() []string { return []string{"compact"} }

// Facts is the dispatch predicate measured on this path (docs/gemini.md): a
// leading '/' dispatches by paste; a pasted leading '!' reached the model as a
// prompt; '@' is listed because a mention has a meaning of its own there. The
// guard's constant prefix closes the first character.
func (Adapter) Facts() guard.DispatchFacts {
	return guard.DispatchFacts{Form: guard.FormFirstChar, Sigils: "/!@"}
}

// PasteSettle: 600 ms between paste and Enter (BeforeAgent came within
// 100 ms of the Enter). No PasteQuiet
// (harness.Capabilities.PasteQuiet): Gemini CLI 0.61.0 draws a paste in its
// box before an Enter would submit it. Measured 2026-12-06 (seat/measure's
// TestPasteCommitTiming, 5-line paste): an Enter once the box showed the
// paste and the pane had been quiet 0 to 30 ms became a newline 35 of 35
// times (load average 1 to 40). Its window lags under load: an Enter 300 ms
// after the paste submitted 6 of 6 at load 1, 0 of 5 at load 11 to 40 (the
// Enter retry then submitted each); 1 s after it, 15 of 15 (docs/gemini.md).
// Under the full test suite (load average 10 to 17, 2026-12-06): 300 ms 3
// of 6, 600 ms 6 of 6. A missed Enter costs submit_timeout (5 s); the
// longer settle costs 300 ms a message.
func (Adapter) PasteSettle() config.Duration {
	return config.Duration{Duration: 600 * time.Millisecond}
}

// CompactionDone (harness.Capabilities.CompactionDone) reads the chat file for
// the end of a compression started at since: Gemini fires no hook after one
// (measured), and records the history it kept with the summary as a user
// message starting "<state_snapshot>".
func (Adapter) CompactionDone(s state.Seat, c config.Config, sessionID string, since time.Time) (bool, string, error) {
	return CompressedSince(Home(s, c), sessionID, since)
}

// PrepareSeatHome (harness.Capabilities.PrepareSeatHome) runs PrepareHome and
// says what it set.
func (Adapter) PrepareSeatHome(s state.Seat, c config.Config, pantty string) ([]string, error) {
	if err := PrepareHome(s, c, pantty); err != nil {
		return nil, err
	}
	keys := fmt.Sprintf("folderTrust off, no update check, no usage statistics, model.compressionThreshold %g, ui.escapePastedAtSymbols true, general.retryFetchErrors false, ui.showCompatibilityWarnings false", CompressionOutOfReach)
	home := Home(s, c)
	return []string{
		SystemSettingsPath(s) + " (the CLI's system scope, " + SystemSettingsEnv + ", over the machine's own): pantty's hooks (" + strings.Join(HookEvents, ", ") + "), " + keys,
		SettingsPath(home) + ": security.auth.selectedType gemini-api-key unless set, " + keys + "; pantty's hooks removed from it (a person's own kept)",
	}, nil
}

// Jail (harness.Capabilities.Jail): Gemini CLI's own --sandbox needs docker,
// podman or runsc, so the whole CLI runs in pantty's bubblewrap jail, writing
// only the workdir and its GEMINI_CLI_HOME (HOME is the same directory, Env).
// Measured on 0.61.0, 2026-12-05 (docs/gemini.md, "Isolation").
func (Adapter) Jail(s state.Seat, c config.Config) []string { return []string{Home(s, c)} }

// JailReadable (harness.Capabilities.JailReadable): the system-scope
// settings, read by the CLI, not writable by its model's shell.
func (Adapter) JailReadable(s state.Seat, _ config.Config) []string {
	return []string{SystemSettingsPath(s)}
}

// RetryBudget (harness.Capabilities.RetryBudget) is how long Gemini CLI
// 0.61.0 may go on retrying a failed model request inside one turn, from its
// first retry: with the "Auto" model, 3 attempts on the routed model, then 10
// on its fallback, each 5 s doubling to 30 s after the last, ±30 % jitter
// (its bundled retry.ts and model policy chain) — about 5 minutes of waits
// for a 5xx — and a 429's Retry-After stretches each wait to at least that
// (30 s: about 8 minutes). Ten minutes covers both with the requests' own
// time; a longer outage ends the turn on the CLI's error, a provider wait.
// The "Auto" router's own retries come before the turn's first request and
// are not seen at all (docs/gemini.md, "Retries"): the budget counts from
// the first retry the seat sees.
const RetryBudget = 10 * time.Minute

// Caps lists what Gemini CLI can do beyond the required methods.
func (a Adapter) Caps() harness.Capabilities {
	return harness.Capabilities{FindPrompt: a.FindPrompt, TurnReply: TurnReply, InputReady: a.InputReady, Composer: a.Composer,
		BareCommands: a.BareCommands(), CommandWords: CommandWords, CommandSettled: a.CommandSettled, CompactionDone: a.CompactionDone, InjectsWithNextTurn: true, RedrawAfterStart: RedrawAfterStart,
		PrepareSeatHome: a.PrepareSeatHome, Measure: a.Measure, Binary: DefaultBinary, Jail: a.Jail, JailReadable: a.JailReadable, RetryBudget: RetryBudget,
		HookFlags: []harness.HookFlag{{Name: "gemini-hook", Usage: "a Gemini CLI hook (BeforeAgent, AfterAgent, PreCompress translated)",
			Run: func(home, name string, _ []string, stdin io.Reader, stdout, stderr io.Writer) int {
				return RunHook(home, name, stdin, stdout, stderr)
			}}}}
}
