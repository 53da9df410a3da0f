package seat

import (
	"crypto/rand"
	"fmt"
	"os"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/machine"
	"github.com/pantty/pantty/tmux"
)

// Progress is one line the driver reports to the `seat start` that spawned it,
// so start can show honest progress and exit with the driver's own verdict.
type Progress struct {
	State   string `json:"state"` // progress, ready, held (StateHeld), refused, error
	Text    string `json:"text,omitempty"`
	Holder  string `json:"holder,omitempty"`
	Session string `json:"session,omitempty"`
	Adopted bool   `json:"adopted,omitempty"`
}

// Driver phases as heartbeat.toml records them; internal/machine names them
// and the events between them.
const (
	PhaseStarting    = string(machine.Starting)
	PhaseIdle        = string(machine.Idle)
	PhaseSubmitting  = string(machine.Submitting)
	PhaseInTurn      = string(machine.InTurn)
	PhaseCancelling  = string(machine.Cancelling)
	PhaseCompacting  = string(machine.Compacting)
	PhaseRelay       = string(machine.Relay)
	PhaseProvider    = string(machine.Provider)
	PhaseMeans       = string(machine.Means)
	PhaseRetry       = string(machine.Retry)
	PhaseRelaunching = string(machine.Relaunching)
	PhaseStopping    = string(machine.Stopping)
	PhaseHeld        = string(machine.Held)
)

// NewSessionID makes a random (version 4) UUID: pantty chooses the harness session
// id before the first launch so it can resume that exact session later.
func NewSessionID() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// SocketFor resolves the seat's tmux socket: seat.toml, then $PANTTY_TMUX_SOCKET,
// then "pantty" — always a private server, never the user's default one.
func SocketFor(c config.Config) (string, error) {
	spec := c.Tmux.Socket
	if spec == "" {
		spec = os.Getenv("PANTTY_TMUX_SOCKET")
	}
	if spec == "" {
		spec = "pantty"
	}
	return tmux.SocketPath(spec)
}

// UnnamedTransition starts the driver.log line of a phase change that
// internal/machine's table does not name.
const UnnamedTransition = "machine: unnamed transition:"
