package harness

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pantty/pantty/harness/codex/appserver"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/state"
)

// Adapter is what one harness must provide for pantty to drive it as a resident
// seat. The driver owns the sequence (ready → paste → evidence → turn end); an
// adapter answers only the harness-specific questions.
type Adapter interface {
	// Name is the harness name seat.toml uses.
	Name() string
	// Argv builds the pane command for one launch. Resume is decided by the
	// driver from SessionExists, never from "first start or not".
	Argv(l Launch) ([]string, error)
	// Env adds adapter-specific variables to the harness environment.
	Env(s state.Seat, c config.Config) map[string]string
	// SessionExists reports whether the harness has a record of the session
	// (Claude Code: its transcript file).
	SessionExists(s state.Seat, c config.Config, sessionID string) (bool, error)
	// FindTurn looks in the harness's own records for a finished model turn of the
	// submission carrying this id and nonce, for a message whose turn end was
	// missed in a crash. found=false with nil error means "no turn": resubmit once.
	FindTurn(s state.Seat, c config.Config, sessionID, msgID, nonce string) (found bool, where string, err error)
	// Busy reports from the pane's visible text whether a turn is running.
	Busy(screen string) bool
	// Commands is the command door's allow-list: the harness commands pantty may
	// send as itself (for example "compact").
	Commands() []string
	// Facts is the measured dispatch predicate for this harness's tmux path.
	Facts() guard.DispatchFacts
	// PasteSettle is the adapter's default quiet time between paste and Enter.
	PasteSettle() config.Duration
	// Caps is what this harness can do beyond the methods above; a zero
	// field means it cannot, and the driver does without.
	Caps() Capabilities
}

// Capabilities are a harness's optional abilities, one field each, read by the
// driver from one place instead of by type assertions spread over its files.
// A nil function or a zero value means "this harness cannot"; each field's
// comment names the interface it replaces, which carries the measured reason.
type Capabilities struct {
	// FindPrompt is the capability: whether the harness's own records
	// hold this submission's prompt at all (a user row carrying its id and nonce),
	// its turn finished or not. A paste with no UserPromptSubmit evidence whose
	// prompt the harness recorded did reach it (the event was lost, not the paste);
	// queueing it again unmarked would make the model see it twice, so the driver
	// resubmits it once, marked, like a turn lost in a crash.
	FindPrompt func(s state.Seat, c config.Config, sessionID, msgID, nonce string) (found bool, where string, err error)
	// InputReady is the capability for a harness that fires SessionStart
	// before its input box can take a paste. Claude Code 2.1.328 does: SessionStart
	// came about 170 ms before it enabled bracketed paste and 260 ms before it drew
	// the input box, and a paste in that window was not bracketed and lost its Enter
	// (docs/claude-code.md). For such an adapter the driver treats SessionStart as
	// "ready" only once the pane also shows InputReady, waiting a bounded time.
	InputReady func(screen string) bool
	// RedrawAfterStart is the capability for a harness that clears and
	// redraws its screen after SessionStart: the driver waits this long
	// before InputReady may count. Gemini CLI 0.61.0 on a resume fires
	// SessionStart while the previous frame, input box included, is still on
	// the pane, then blanks it and draws the conversation again; a paste
	// sent at SessionStart was lost in 4 of 4 launches, none 1 s later
	// (measured 2026-12-04, docs/gemini.md). No event marks the redraw's end.
	RedrawAfterStart time.Duration
	// Composer is the capability: the text in the harness's input
	// box as the pane shows it (ok=false when no box is visible; a placeholder hint
	// is ""). A cancel uses it to verify the box is clean: Claude Code puts an
	// interrupted prompt back into the box as its turn stops, sometimes just after
	// the footer goes idle, so a clear sent at once can come first.
	Composer func(screen string) (text string, ok bool)
	// PasteQuiet is the capability for a harness measured to draw a
	// bracketed paste in its box only once an Enter would submit it: the
	// driver sends Enter as soon as the box (Composer) shows the paste and
	// the pane has printed nothing for PasteQuiet, with paste_settle as the
	// bound instead of the wait (docs/performance-history.md, "Enter on the
	// paste's commit"). Zero: not measured, or measured unsafe; Enter waits
	// the whole paste_settle. Needs Composer.
	PasteQuiet time.Duration
	// NamesOwnSession is the capability for harnesses that choose their own
	// session id (Codex's thread id): pantty cannot pass one at launch, so the
	// driver records it from the first turn end bound to a pantty submission, and
	// resumes that id from then on.
	NamesOwnSession bool
	// StartsLazily is the capability for a harness whose SessionStart
	// hook fires with the first turn of a session, not when the harness starts
	// (Codex CLI 0.171: SessionStart source startup, resume or compact runs as the
	// next turn begins). For such a harness the driver takes the pane showing its
	// input box (InputReady) as the start, and a compaction's re-injection
	// (SessionStart source "compact", whose output the harness puts into that
	// turn's request) as arriving with the first turn after the compaction.
	StartsLazily bool
	// InjectsWithNextTurn is the capability for a harness that re-injects a
	// compaction's handoff into the first turn after it rather than right
	// after the compaction (Gemini CLI 0.61.0 fires no SessionStart after
	// /compress; its BeforeAgent hook adds the handoff to that turn's
	// request). As with StartsLazily, the cycle is done at PostCompact and the
	// injection is recorded when that turn starts.
	InjectsWithNextTurn bool
	// CompactionDone is the capability for a harness with no hook after a
	// compaction (Gemini CLI 0.61.0: PreCompress, then nothing): whether the
	// harness's own record shows a compaction finished at or after since, and
	// where. While a /compact the door sent has started (its PreCompact
	// fired), the driver asks on its command poll and records the answer as
	// the PostCompact event the harness does not send.
	CompactionDone func(s state.Seat, c config.Config, sessionID string, since time.Time) (done bool, where string, err error)
	// CommandWords is the capability for a harness whose own word for an
	// allowed command differs from the door's name (guard.CommandRules.Words).
	CommandWords map[string]string
	// CommandSettled is the capability for a harness whose input box offers
	// completions that Enter would accept instead of the typed command:
	// whether the pane shows the box holding exactly text and no completion
	// but text's own. The command door waits for it between paste and Enter.
	// Gemini CLI 0.61.0 shows the whole command list (41 entries) for about
	// 50 ms after a paste of "/compact", filtered only later, and Enter on it
	// takes the selected entry: under load a pasted /compact ran /clear
	// (measured 2026-12-04).
	CommandSettled func(screen, text string) bool
	// BareCommands is the capability: the allow-listed commands that
	// take no arguments in this harness (guard.CommandRules.Bare).
	BareCommands []string
	// CommandAnswer is the capability: the harness's own answer to a
	// command the door sent at or after since, as the harness recorded it, with
	// ok=false while it has recorded none. Claude Code 2.1.328 records a local
	// command's output in its transcript (a "local_command" row holding
	// "<local-command-stdout>Not enough messages to compact.</local-command-stdout>",
	// measured 2026-12-03), about 140 ms after the command. The driver uses it to
	// tell a refused command from an accepted one within seconds instead of waiting
	// out a timeout (docs/claude-code.md).
	CommandAnswer func(s state.Seat, c config.Config, sessionID string, cmd guard.Command, since time.Time) (answer string, ok bool, err error)
	// TurnArgv is set by adapters whose harness can run one turn per
	// process (the turn-spawned shape): the guarded prompt goes on stdin — never on
	// argv, where ps shows it and ARG_MAX limits it — and a JSON result envelope
	// comes back on stdout.
	TurnArgv func(l Launch) ([]string, error)
	// ProbeIsolation is the capability for a harness with an OS sandbox for
	// the model's shell. ProbeIsolation checks, with the harness's environment, that
	// the sandbox really runs here for this seat, and names it; an error says what
	// is missing. Secrets lists the harness's own credential files for the seat
	// (absolute paths): pantty denies them to the model like $PANTTY_HOME.
	ProbeIsolation func(s state.Seat, c config.Config, env map[string]string) (mechanism string, err error)
	// RetryBudget is the capability of a harness that retries a failed model
	// request inside the turn by itself and says so to its hooks only per
	// attempt (a RequestFailed event with error provider_retrying): how long
	// those retries may last from the first one the seat sees. The turn
	// ceiling then waits at least that long from it (machine.Deadlines), so
	// an outage ends the turn on the harness's own error, which holds the
	// message as a provider wait, instead of on the ceiling, which fails it.
	// Gemini CLI 0.61.0: 3 attempts on the routed model, then 10 on its
	// fallback, 5 s doubling to 30 s apart (docs/gemini.md, "Retries").
	RetryBudget time.Duration
	// AppServer is the capability of a harness with an app server a seat
	// can run on instead of a TUI in a pane (seat.toml transport =
	// "app-server"; Codex: codex.StartAppServer, docs/codex.md): it prepares
	// the harness's home for the launch l and starts the seat's own server,
	// returning once it listens. The server is the seat's harness process:
	// its Done is the harness's exit.
	AppServer func(ctx context.Context, l Launch, stderr io.Writer) (*appserver.Server, error)
	// KeepsNoInterrupted is the capability of a harness that never puts an
	// interrupted prompt back into its input box (measured): after a
	// cancel the driver looks at the box once instead of watching it stay
	// empty for a second (Claude Code puts it back up to 174 ms late:
	// seat/driver's composerQuiet). Codex CLI 0.171.0: the box stayed
	// empty after every Escape measured (docs/codex.md).
	KeepsNoInterrupted bool
	// TurnReply is the capability: the reply of the submission's finished
	// turn as the harness's own records hold it. A message the driver
	// closes by the transcript (its turn-end event had not come when the
	// pane showed the turn over) keeps that reply; without it the message
	// ends processed with none (Gemini CLI under a loaded CI run: `send
	// --wait` printed an empty reply, 2026-12-06).
	TurnReply func(s state.Seat, c config.Config, sessionID, msgID, nonce string) (string, error)
	// FailureName names a failed turn's error, given in the harness's own
	// words, in the StopFailure vocabulary hookwire.ClassifyFailure reads
	// (authentication_failed, billing_error, server_error, …): for a failure
	// that reaches the driver without the hook's StopFailure, as a failed
	// turn/completed on the app server can (Codex: ClassifyError, the
	// hook's own translation of the same words).
	FailureName func(words string) string
	// Jail is the capability of a harness with no OS sandbox of its own that
	// runs whole under pantty's bubblewrap jail (seat/jail) when isolation is
	// auto or on: the directories it must write besides the workdir (its
	// home), one absolute path each. A harness gets it once it was measured
	// there (Gemini CLI 0.61.0, 2026-12-05: docs/gemini.md, "Isolation");
	// ProbeIsolation, when set, wins.
	Jail func(s state.Seat, c config.Config) []string
	// JailReadable are files the jailed harness must read and the model
	// must not write: they are bound read-only into the jail (its settings
	// that pantty enforces, kept in the seat's directory, which the jail
	// otherwise hides). Gemini CLI: its system-scope settings.
	JailReadable func(s state.Seat, c config.Config) []string
	// Secrets lists the harness's own credential files for the seat (see
	// ProbeIsolation): denied to the model like $PANTTY_HOME.
	Secrets func(s state.Seat, c config.Config) []string
	// PrepareSeatHome is the capability: answer the harness's first-run
	// dialogs ahead (onboarding, "use this API key?", "trust this folder?", hook
	// review) in the home the seat's harness will see, so an unattended launch
	// starts straight into its input box. It returns what it wrote, one line each,
	// for `pantty seat prepare-home` to print. pantty is the absolute path of the
	// pantty binary the harness's hooks call.
	PrepareSeatHome func(s state.Seat, c config.Config, pantty string) (wrote []string, err error)
	// HomeUnprepared is the capability of a harness whose home pantty does
	// not own (Claude Code: the person's HOME or CLAUDE_CONFIG_DIR): what
	// PrepareSeatHome would still change in the home the harness sees with env,
	// one line each; none when nothing. An unprepared home stops an unattended
	// start at a dialog or at a check of its own (Claude Code's onboarding tried
	// api.anthropic.com although a gateway was set, and exited after 7 s), so
	// start, recover and the driver refuse it naming `pantty seat prepare-home`
	// (CheckHome). A harness whose home pantty owns (Codex, Gemini CLI) prepares
	// it at every launch instead, and needs no check.
	HomeUnprepared func(s state.Seat, c config.Config, env map[string]string) (missing []string, err error)
	// HookFlags are the harness's own doors into `pantty hook`, for a harness
	// whose hooks do not speak Claude Code's JSON on stdin (Codex: its hooks
	// name the turn differently, its notify program passes the JSON as the last
	// argument). `pantty hook --NAME` runs Run; cmd/pantty builds the flags from
	// the registered adapters, so the harness's settings name them unchanged.
	HookFlags []HookFlag
	// Measure makes the harness measurable by `pantty measure`: a throwaway
	// seat pointed at the harness's loopback model-API stand-in (started here,
	// stopped by the rig's Close) and a detector of what reached the model.
	// The measurement itself is written once, in seat/measure, against this.
	Measure func(MeasureSpec) (MeasureRig, error)
	// Binary is the harness's own command when seat.toml names none, looked up
	// on PATH; "" when the harness is no binary of its own (the simulator is
	// pantty). The gates ask it `--version` (launch.InstalledVersion) to judge the
	// version actually installed.
	Binary string
}

// HookFlag is one harness-specific form of `pantty hook`: the boolean flag
// --Name selects Run, which records the event for seat name under home and
// returns the hook's exit code. args are the command's positional arguments.
type HookFlag struct {
	Name, Usage string
	Run         func(home, name string, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// Launch is what an adapter needs to build one launch of its harness.
type Launch struct {
	Seat      state.Seat
	Config    config.Config
	SessionID string
	Resume    bool
	Settings  string // path of the per-seat settings file (hooks, status line)
	Pantty    string // absolute path of the pantty binary the hooks call
	// Authority is what this launch lets the model reach (ResolveAuthority).
	Authority state.Authority
}

var (
	adaptersMu sync.Mutex
	adapters   = map[string]Adapter{}
)

// Register makes an adapter available by name; harness/all registers each
// one. The registry is the one list of harnesses: seat.toml's harness key
// (Register tells state.KnowHarness the name), its documentation and pantty
// hook's flags all come from it.
func Register(a Adapter) {
	adaptersMu.Lock()
	defer adaptersMu.Unlock()
	adapters[a.Name()] = a
	state.KnowHarness(a.Name())
}

// Adapters returns every registered adapter, by name.
func Adapters() []Adapter {
	adaptersMu.Lock()
	defer adaptersMu.Unlock()
	out := make([]Adapter, 0, len(adapters))
	for _, a := range adapters {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// AdapterFor returns the registered adapter for a harness name.
func AdapterFor(name string) (Adapter, error) {
	adaptersMu.Lock()
	defer adaptersMu.Unlock()
	a, ok := adapters[name]
	if !ok {
		var names []string
		for n := range adapters {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("no adapter for harness %q (have %s)", name, strings.Join(names, ", "))
	}
	return a, nil
}
