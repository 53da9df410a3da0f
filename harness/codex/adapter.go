// Package codex is pantty's adapter for the Codex CLI (harness "codex"): how to
// launch the real `codex` TUI in a pane with a per-seat CODEX_HOME, how its
// hooks and its notify program reach `pantty hook`, where its session record
// (the rollout) lives, how to find a finished turn in it, and how its footer
// shows a running turn. Every rule here was measured against Codex CLI 0.171.0
// in tmux 3.3a against a loopback Responses-API stand-in (harness/codex/standin);
// docs/codex.md says what was measured and how to measure a new version.
package codex

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/panetext"
	"github.com/pantty/pantty/seat/state"
)

// DefaultBinary is the harness command when seat.toml names none: `codex`,
// looked up on the harness's PATH.
const DefaultBinary = "codex"

// Adapter drives the Codex CLI TUI as a resident seat.
type Adapter struct{}

// Name is the harness name in seat.toml.
func (Adapter) Name() string { return "codex" }

// ownArgs are the arguments pantty sets itself; seat.toml's args may not repeat
// them (a second resume or a daemon would take the session out of the pane,
// a trust bypass would run hooks pantty did not vet).
var ownArgs = []string{"resume", "fork", "exec", "e", "--no-daemon", "--remote", "--last", "--dangerously-bypass-hook-trust",
	"--profile", "-p"}

// Argv prepares the seat's CODEX_HOME (PrepareHome: config, hooks and their
// trust) and builds `codex --no-daemon` on a first launch, `codex resume <thread
// id> --no-daemon` on every later one. --no-daemon keeps the session in the
// pane's own process: by default the TUI hands its turns to a shared background
// server that outlives the pane (measured on 0.171.0), so a killed pane would
// not stop a turn and a relaunch would not be the only owner of the session.
func (Adapter) Argv(l harness.Launch) ([]string, error) {
	if err := harness.RefuseOwnArgs("codex", l.Config.Args, ownArgs, "the session and the server mode"); err != nil {
		return nil, err
	}
	if err := PrepareHome(l.Seat, l.Config, l.Pantty, l.Authority); err != nil {
		return nil, err
	}
	argv := []string{l.Binary(DefaultBinary)}
	if l.Resume {
		if !uuidRE().MatchString(l.SessionID) {
			return nil, fmt.Errorf("codex: thread id %q is not a UUID", l.SessionID)
		}
		argv = append(argv, "resume", l.SessionID)
	}
	argv = append(argv, "--no-daemon")
	return append(append(argv, modeArgs(l.Config)...), l.Config.Args...), nil
}

func binary(c config.Config) string {
	if c.Command != "" {
		return c.Command
	}
	return DefaultBinary
}

// modeArgs carries seat.toml's model and permission mode (Codex's sandbox mode:
// read-only, workspace-write or danger-full-access).
func modeArgs(c config.Config) []string {
	var out []string
	if c.Model != "" {
		out = append(out, "--model", c.Model)
	}
	if c.PermissionMode != "" {
		out = append(out, "--sandbox", c.PermissionMode)
	}
	return out
}

// Env points Codex at the seat's own CODEX_HOME: the person's ~/.codex is never
// read or written by a seat.
func (Adapter) Env(s state.Seat, c config.Config) map[string]string {
	return map[string]string{"CODEX_HOME": Home(s, c)}
}

// SessionExists: Codex writes the thread's rollout with its first turn, and
// `codex resume <id>` needs it; a thread id pantty has not recorded yet (""),
// or one without a rollout, is a fresh start.
func (Adapter) SessionExists(s state.Seat, c config.Config, id string) (bool, error) {
	if id == "" {
		return false, nil
	}
	p, err := RolloutPath(Home(s, c), id)
	return p != "", err
}

// FindTurn looks in the rollout for the submission's turn (see FindTurn).
func (Adapter) FindTurn(s state.Seat, c config.Config, sessionID, msgID, nonce string) (bool, string, error) {
	return FindTurn(Home(s, c), sessionID, msgID, nonce)
}

// TurnReply is the reply of the submission's finished turn as the rollout
// holds it: its task_complete's last_agent_message ("" when the turn is not
// found finished); harness.Capabilities.TurnReply.
func TurnReply(s state.Seat, c config.Config, thread, msgID, nonce string) (string, error) {
	_, _, reply, err := scanRollout(Home(s, c), thread, msgID, nonce, false)
	return reply, err
}

// FindPrompt looks in the rollout for the submission's prompt, its turn
// completed or not (harness.Capabilities.FindPrompt).
func (Adapter) FindPrompt(s state.Seat, c config.Config, sessionID, msgID, nonce string) (bool, string, error) {
	return FindPrompt(Home(s, c), sessionID, msgID, nonce)
}

// statusRE is the footer status line pantty configures ([tui] status_line =
// run-state, thread-id, …): "Ready · <thread id> · …", "Working · <id>".
var statusRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*([^·]+?) · ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?:\s+·|\s*$)`)
})

var uuidRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
})

// Status reads the footer's status line: the run state ("Ready", "Working",
// "Thinking", …) and the thread id; ok=false when no status line is visible
// (a dialog covers it, or the TUI is still starting). The last match counts: a
// reply quoting such a line sits above the footer.
func Status(screen string) (state, thread string, line int, ok bool) {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if m := statusRE().FindStringSubmatch(lines[i]); m != nil {
			return strings.TrimSpace(m[1]), m[2], i, true
		}
	}
	return "", "", 0, false
}

// Busy reads the run state in the footer: anything but "Ready" is a turn (or a
// compaction) in progress. Codex shows "esc to interrupt" only while it waits
// for the first token and hides it while a reply streams (measured), so that
// text alone is not a witness; it counts only where no status line is visible.
func (Adapter) Busy(screen string) bool {
	if state, _, _, ok := Status(screen); ok {
		return state != "Ready"
	}
	return strings.Contains(screen, "esc to interrupt")
}

// InputReady (harness.Capabilities.InputReady) is the footer saying Ready under the input box.
// Codex fires SessionStart only with the first turn, so this is also how the
// driver knows the harness started (harness.Capabilities.StartsLazily).
func (Adapter) InputReady(screen string) bool {
	state, _, line, ok := Status(screen)
	if !ok || state != "Ready" {
		return false
	}
	_, _, found := composerLines(screen, line)
	return found
}

// StartsLazily (harness.Capabilities.StartsLazily): SessionStart fires as a turn begins.
func (Adapter) StartsLazily() bool { return true }

// NamesOwnSession (harness.Capabilities.NamesOwnSession): Codex chooses its thread id.
func (Adapter) NamesOwnSession() bool { return true }

// placeholders are the input box's dimmed hints: not typed text.
var placeholders = []string{"Ask Codex to do anything", "Ask a follow-up question"}

// composerLines returns the input box's lines above the status line at index
// status: from the last line starting with "›" down to the last non-blank line.
func composerLines(screen string, status int) ([]string, int, bool) {
	lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
	end := status - 1
	for end >= 0 && strings.TrimSpace(lines[end]) == "" {
		end--
	}
	for i := end; i >= 0 && i > end-20; i-- {
		if strings.HasPrefix(lines[i], "›") {
			return lines[i : end+1], i, true
		}
	}
	return nil, 0, false
}

// Composer (harness.Capabilities.Composer) returns the text in Codex's input box, read
// from the pane: the "›" line above the footer and its continuation lines. The
// placeholder hint counts as empty. ok is false when no box is visible. Codex
// does not put an interrupted prompt back into the box (measured), so after a
// cancel it is empty.
func (Adapter) Composer(screen string) (string, bool) {
	_, _, line, ok := Status(screen)
	if !ok {
		return "", false
	}
	box, _, found := composerLines(screen, line)
	if !found {
		return "", false
	}
	text := panetext.BoxText(box, "›")
	if slices.Contains(placeholders, text) {
		return "", true
	}
	return text, true
}

// Commands is the command door's allow-list: compact (pantty's compaction
// cycle: PreCompact, the summarisation request, PostCompact; the thread id
// stays). Not new or clear: they start another thread, so the seat's evidence
// would no longer bind to session.toml.
func (Adapter) Commands() []string { return []string{"compact"} }

// BareCommands: Codex's /compact takes no arguments; "/compact TEXT" is sent to
// the model as a prompt (measured on 0.171.0, e2e_compact_test.go).
func (Adapter) BareCommands() []string { return []string{"compact"} }

// Facts is the predicate measured on this path by `pantty measure dispatch
// --harness codex` (harness/codex/testdata/dispatch-0.171.0-2026-12-02): a leading
// '/' or '!' dispatches, after any leading newlines (Codex skips them before it
// tests the first character); the guard's constant prefix closes it.
func (Adapter) Facts() guard.DispatchFacts {
	return guard.DispatchFacts{Form: guard.FormTrimmedFirstChar, Sigils: "/!"}
}

// PasteQuiet (harness.Capabilities.PasteQuiet): Codex CLI 0.171.0 takes a
// bracketed paste as one event and draws it in its box at once; an Enter
// after it is a key of its own. Measured 2026-12-06 (seat/measure's
// TestPasteCommitTiming, 5-line paste, machine load average 18 to 40): an
// Enter sent once the box showed the paste and the pane had been quiet 0,
// 10 or 30 ms submitted 60 of 60 times, and one sent right after the
// paste, not looking, 10 of 10.
const PasteQuiet = 10 * time.Millisecond

// PasteSettle: 150 ms between paste and Enter (measured: UserPromptSubmit came
// 30-60 ms after the Enter).
func (Adapter) PasteSettle() config.Duration {
	return config.Duration{Duration: 150 * time.Millisecond}
}

// PrepareSeatHome (harness.Capabilities.PrepareSeatHome) runs PrepareHome and says what it set in
// the seat's CODEX_HOME.
// The isolation profile is the one the last launch recorded (authority.toml),
// none before the first launch: every launch prepares the home again with the
// authority it resolves, so this only answers the first-run questions ahead.
func (Adapter) PrepareSeatHome(s state.Seat, c config.Config, pantty string) ([]string, error) {
	a, _ := s.AuthorityFile().Read()
	if err := PrepareHome(s, c, pantty, a); err != nil {
		return nil, err
	}
	home := Home(s, c)
	return []string{
		filepath.Join(home, "hooks.json") + ": pantty's hooks (" + strings.Join(HookEvents, ", ") + ")",
		filepath.Join(home, "config.toml") + fmt.Sprintf(": notify, tui.status_line, projects[%q].trust_level = \"trusted\" (no trust dialog), "+
			"model_auto_compact_token_limit, check_for_update_on_startup = false, approval_policy = \"never\" unless already set", c.Workdir),
		filepath.Join(home, "config.toml") + ": hooks.state trusted hashes for exactly pantty's hooks, asked of codex itself (no \"Hooks need review\")",
	}, nil
}

// Caps lists what Codex can do beyond the required methods.
func (a Adapter) Caps() harness.Capabilities {
	return harness.Capabilities{FindPrompt: a.FindPrompt, TurnReply: TurnReply, InputReady: a.InputReady, Composer: a.Composer,
		NamesOwnSession: a.NamesOwnSession(), StartsLazily: a.StartsLazily(), BareCommands: a.BareCommands(),
		ProbeIsolation: a.ProbeIsolation, Secrets: a.Secrets, PrepareSeatHome: a.PrepareSeatHome, Measure: a.Measure, Binary: DefaultBinary,
		PasteQuiet: PasteQuiet, AppServer: StartAppServer, FailureName: ClassifyError, KeepsNoInterrupted: true,
		HookFlags: []harness.HookFlag{
			{Name: "codex-hook", Usage: "a Codex hook (turn_id named prompt_id; PostModelRequest translated)",
				Run: func(home, name string, _ []string, stdin io.Reader, stdout, stderr io.Writer) int {
					return RunHook(home, name, stdin, stdout, stderr)
				}},
			{Name: "codex-notify", Usage: "Codex's notify program: the JSON is the last argument",
				Run: func(home, name string, args []string, _ io.Reader, _, stderr io.Writer) int {
					last := ""
					if len(args) > 0 {
						last = args[len(args)-1]
					}
					return RunNotify(home, name, last, stderr)
				}},
		}}
}
