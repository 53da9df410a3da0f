package config

import (
	"fmt"
)

// Isolation values of seat.toml's [authority] isolation, and the verdict a
// launch records in authority.toml. A seat's model has a shell tool and runs as
// the same OS user as pantty: without the harness's OS sandbox it can write any
// seat's control/, inbox and seat.toml and signal pantty's processes
// (docs/intake.md, "same-user writes"). The sandbox closes that by the OS.
const (
	IsolationAuto        = "auto" // on when the harness and this OS support it (the default)
	IsolationOn          = "on"   // required: a launch without it fails
	IsolationOff         = "off"  // the person turned it off
	IsolationUnavailable = "unavailable"
)

// AuthorityConfig is seat.toml's [authority] table.
type AuthorityConfig struct {
	// Isolation is auto (default), on or off.
	Isolation string `toml:"isolation"`
}

func (a *AuthorityConfig) validate() error {
	switch a.Isolation {
	case "":
		a.Isolation = IsolationAuto
	case IsolationAuto, IsolationOn, IsolationOff:
	default:
		return fmt.Errorf("[authority] isolation = %q: want auto, on or off", a.Isolation)
	}
	return nil
}
