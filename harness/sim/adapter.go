package sim

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pantty/pantty/harness"
	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/panetext"
	"github.com/pantty/pantty/seat/state"
)

// Adapter drives the simulator as a resident seat. It mirrors the Claude Code
// adapter (same settings shape, same hooks, same session flags) so that every
// pantty path the real harness takes is exercised by the double.
type Adapter struct{}

// Name is the harness name in seat.toml.
func (Adapter) Name() string { return "sim" }

// Argv runs `pantty sim` (or seat.toml's command) with the per-seat settings and
// --session-id on a first launch, --resume on every later one.
func (Adapter) Argv(l harness.Launch) ([]string, error) {
	argv := []string{l.Pantty, "sim"}
	if l.Config.Command != "" {
		argv = []string{l.Config.Command}
	}
	argv = append(append(argv, "--settings", l.Settings), l.SessionArgs("--permission-mode")...)
	return append(argv, l.Config.Args...), nil
}

// Env points the simulator's records into the seat's harness/ directory.
func (Adapter) Env(s state.Seat, c config.Config) map[string]string {
	return map[string]string{"PANTTY_SIM_STATE": stateDir(s, c)}
}

func stateDir(s state.Seat, c config.Config) string {
	if v := c.Env["PANTTY_SIM_STATE"]; v != "" {
		return v
	}
	return s.HarnessDir()
}

func transcriptPath(s state.Seat, c config.Config, id string) string {
	return filepath.Join(stateDir(s, c), "sessions", id+".jsonl")
}

// SessionExists: the simulator's session record is its transcript file.
func (Adapter) SessionExists(s state.Seat, c config.Config, id string) (bool, error) {
	_, err := os.Stat(transcriptPath(s, c, id))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// FindTurn scans the transcript for the user row carrying the guard header of
// this submission followed by an assistant row of the same prompt.
func (Adapter) FindTurn(s state.Seat, c config.Config, sessionID, msgID, nonce string) (bool, string, error) {
	return scanTranscript(transcriptPath(s, c, sessionID), msgID, nonce, false)
}

// FindPrompt scans the transcript for the user row carrying the guard header of
// this submission, answered or not (harness.Capabilities.FindPrompt).
func (Adapter) FindPrompt(s state.Seat, c config.Config, sessionID, msgID, nonce string) (bool, string, error) {
	return scanTranscript(transcriptPath(s, c, sessionID), msgID, nonce, true)
}

// scanTranscript finds the submission's user row and, unless promptOnly, the
// assistant row of the same prompt after it; where is the row's line.
func scanTranscript(path, msgID, nonce string, promptOnly bool) (bool, string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, "", nil
	}
	if err != nil {
		return false, "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	prompt := ""
	for n := 1; sc.Scan(); n++ {
		var row struct {
			Type     string `json:"type"`
			PromptID string `json:"promptId"`
			Message  struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &row) != nil {
			continue
		}
		switch row.Type {
		case "user":
			var text string
			if json.Unmarshal(row.Message.Content, &text) == nil {
				if id, nn, _, ok := guard.MatchHeader(text); ok && id == msgID && nn == nonce {
					if promptOnly {
						return true, path + ":" + strconv.Itoa(n), nil
					}
					prompt = row.PromptID
				}
			}
		case "assistant":
			if prompt != "" && row.PromptID == prompt {
				return true, path + ":" + strconv.Itoa(n), nil
			}
		}
	}
	return false, "", sc.Err()
}

// Busy: the simulator, like Claude Code, shows "esc to interrupt" while a turn runs.
func (Adapter) Busy(screen string) bool { return strings.Contains(screen, "esc to interrupt") }

// Commands is the command door's allow-list for the simulator: like Claude
// Code's, without /clear, which would start another session under the seat.
func (Adapter) Commands() []string { return []string{"compact", "context"} }

// Facts: the simulator dispatches on the first character by default.
func (Adapter) Facts() guard.DispatchFacts { return guard.DefaultDispatchFacts }

// PasteSettle is short: the simulator's commit window is configurable and small.
func (Adapter) PasteSettle() config.Duration { return config.Duration{Duration: 50 * time.Millisecond} }

// TurnArgv runs the simulator non-interactively for one turn (`-p`, JSON
// envelope), the turn-spawned shape; the prompt arrives on stdin.
func (a Adapter) TurnArgv(l harness.Launch) ([]string, error) {
	argv, err := a.Argv(l)
	if err != nil {
		return nil, err
	}
	return append(argv, "-p", "--output-format", "json"), nil
}

// simPlaceholder is the hint the simulator draws (dim) in an empty box after a
// refused turn; it is not typed text.
const simPlaceholder = "Resend your message to try again"

// Composer reads the simulator's input box: the lines between the last two
// horizontal rules, without their "> " / "  " prefixes.
func (Adapter) Composer(screen string) (string, bool) {
	box, ok := panetext.BetweenLastRules(screen, panetext.IsRule)
	if !ok {
		return "", false
	}
	text := strings.TrimSpace(panetext.BoxText(box, ">"))
	if text == simPlaceholder {
		return "", true
	}
	return text, true
}

// InputReady (harness.Capabilities.InputReady) is the simulator's input box on
// the pane: a "> " line between two rules — or, for a text taller than the
// box shows, its count of hidden lines ("  … N more lines") where the "> "
// line scrolled away (a long board message's paste read as a dialog, and
// its Enter was held). Before it ("  Starting…") the simulator takes no keys.
func (Adapter) InputReady(screen string) bool {
	box, ok := panetext.BetweenLastRules(screen, panetext.IsRule)
	return ok && len(box) > 0 && (strings.HasPrefix(box[0], ">") || strings.HasPrefix(box[0], hiddenLines))
}

// CommandAnswer (harness.Capabilities.CommandAnswer) reads a command's output from the
// simulator's transcript, which records it in Claude Code's form.
func (Adapter) CommandAnswer(s state.Seat, c config.Config, sessionID string, cmd guard.Command, since time.Time) (string, bool, error) {
	return hookwire.LocalCommandAnswer(transcriptPath(s, c, sessionID), cmd.Name(), since)
}

// Caps lists what the simulator can do beyond the required methods.
func (a Adapter) Caps() harness.Capabilities {
	return harness.Capabilities{FindPrompt: a.FindPrompt, Composer: a.Composer, CommandAnswer: a.CommandAnswer, TurnArgv: a.TurnArgv,
		Measure: a.Measure, InputReady: a.InputReady, PasteQuiet: PasteQuiet}
}

// PasteQuiet (harness.Capabilities.PasteQuiet): the simulator draws a paste
// only once it has committed (its box never shows text an Enter would turn
// into a newline), in one frame; 5 ms of quiet after that frame is margin
// for tmux splitting its output.
const PasteQuiet = 5 * time.Millisecond
