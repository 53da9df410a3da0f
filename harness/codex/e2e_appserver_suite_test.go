package codex_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pantty/pantty/harness/codex"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/hookwire"
	"github.com/pantty/pantty/seat/seattest"
)

// appServerTOML is the seat.toml line of a seat on Codex's app server.
const appServerTOML = `transport = "app-server"`

// TestE2EAppServer is the suite every real harness passes (seattest.E2E) on
// Codex's app-server path (seat.toml transport = "app-server"): the same
// tests as TestE2E, with what differs said here. The pane is a viewer that
// opens after the thread's first turn; a message's submit witness is
// turn/start's answer or the hooks' UserPromptSubmit, whichever the driver
// took first, and the hook's event must bind the turn either way; the
// harness killed is the app server (session.toml's harness pid), and the
// relaunch resumes the thread (thread/resume), launch.toml then holding the
// viewer's `codex resume <thread> --remote unix://<socket>`; a harness that
// cannot start is a server refusing seat.toml's permission_mode (`args` are
// refused at load on this path); the context reading comes from
// thread/tokenUsage/updated; the command door's /compact and the compaction
// cycle are thread/compact/start. Codex's own cancel and outage behaviour
// is the tmux path's (interruptedWithoutStop, codexOutages).
//
// The suite's dispatch control is the command door, not a raw paste: on
// the tmux path the corpus pasted raw would dispatch (/compact compacts),
// on this path there is no composer to paste into, and turn/start takes
// any text as data.
func TestE2EAppServer(t *testing.T) {
	seattest.E2E{
		Adapter: codex.Adapter{}, Prefix: "cxa", Messages: 6, CompactKind: "compact", Cycle: true,
		PaneAfterFirstTurn: true,
		New: func(t *testing.T, name string, toml ...string) *seattest.E2ERig {
			return newRig(t, name, append([]string{appServerTOML}, toml...)...).E2ERig
		},
		Corpus: map[string]string{"d-compact": "/compact", "d-new": "/new", "d-bang": "!touch {bang}",
			"d-space": " /compact", "d-slash": "/"},
		ContextSource: "thread/tokenUsage/updated",
		Cron: func(t *testing.T, name string, toml ...string) (*seattest.E2ERig, seattest.CronSeat) {
			return cronSeat(t, name, append([]string{appServerTOML}, toml...)...)
		},
		// 0.171.0 refuses an unknown sandbox mode at startup (seat.toml's
		// permission_mode is the server's -c sandbox_mode=…).
		BadTOML:  []string{`permission_mode = "no-such-mode"`},
		BadWords: "unknown variant `no-such-mode`, expected one of",
		Outages:  codexOutages,
		Submitted: func(r *seattest.E2ERig, st inbox.Status) error {
			if st.Evidence != "app-server turn/start: turn "+st.PromptID && !strings.Contains(st.Evidence, hookwire.EvUserPromptSubmit) {
				return fmt.Errorf("evidence %q: neither turn/start's answer naming turn %s nor UserPromptSubmit", st.Evidence, st.PromptID)
			}
			return r.HookBound(st)
		},
		ResumeArgv: func(h *seattest.Harness, id, argv string) error {
			sock := filepath.Join(h.Seat().HarnessDir(), "app-server.sock")
			if !strings.HasSuffix(argv, " resume "+id+" --remote unix://"+sock) {
				return fmt.Errorf("%q is not the viewer resuming thread %s on %s", argv, id, sock)
			}
			if log := h.DriverLog(); !strings.Contains(log, "resumed thread "+id+" on the seat's app server") {
				return fmt.Errorf("the driver did not thread/resume %s:\n%s", id, log)
			}
			return nil
		},
		AfterCancel: interruptedWithoutStop,
	}.Run(t)
}
