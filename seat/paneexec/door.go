package paneexec

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"github.com/pantty/pantty/seat/jail"
	"github.com/pantty/pantty/seat/state"
)

// openDoor makes the hook door's socket before the jailed harness starts (so
// its first hook finds it) and returns it as a file to hand to the door's
// server; nil when the launch has no door.
func openDoor(lf state.LaunchFile) (*os.File, error) {
	if lf.Door == "" {
		return nil, nil
	}
	ln, err := jail.Listen(lf.Door)
	if err != nil {
		return nil, fmt.Errorf("hook door: %v", err)
	}
	defer ln.Close()
	return ln.(*net.UnixListener).File()
}

// startDoor starts `pantty __hookdoor LAUNCH.toml` with the door's socket as
// its fd 3, after the harness (HarnessPID takes the pane process's oldest
// child for the harness). It lives below this process like the harness's own
// children: killed with the seat's tree when the harness exits.
func startDoor(launchPath string, door *os.File, env map[string]string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	_, err = os.StartProcess(self, []string{self, "__hookdoor", launchPath}, &os.ProcAttr{
		Env:   jail.WithoutDoor(state.EnvList(env)),
		Files: []*os.File{null, null, null, door},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	return err
}

// ServeDoor is `pantty __hookdoor LAUNCH.toml`: the hook door of the seat
// whose launch record that is (HOME/seats/NAME/launch.toml), served on fd 3
// until the seat's tree ends. Every call runs `pantty hook` for that seat,
// outside the jail, with the launch's environment.
func ServeDoor(launchPath string) error {
	lf, err := state.LaunchFileAt(launchPath).Read()
	if err != nil {
		return err
	}
	ln, err := net.FileListener(os.NewFile(3, "hook door"))
	if err != nil {
		return fmt.Errorf("hook door: fd 3: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	dir := filepath.Dir(launchPath)
	d := jail.Door{Home: filepath.Dir(filepath.Dir(dir)), Seat: filepath.Base(dir), Pantty: self,
		Flags: lf.DoorFlags, Env: jail.WithoutDoor(os.Environ())}
	return d.Serve(ln)
}
