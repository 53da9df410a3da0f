package jail

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/pantty/pantty/seat/state"
)

// DoorEnv names the hook door in the jailed harness's environment: `pantty
// hook` run with it set hands its call to the door instead of recording the
// event itself (it cannot: the state root is hidden in the jail).
const DoorEnv = "PANTTY_HOOK_DOOR"

// maxSocketPath is the longest Unix socket path Linux takes (sun_path, 108
// bytes with its NUL).
const maxSocketPath = 107

// maxCall bounds one call's payload (a hook's stdin): Gemini's hooks pantty
// installs carry a prompt and a reply, never the conversation.
const maxCall = 16 << 20

// callTimeout bounds one call, the hook's run outside included (the harness
// kills a hook it waits on longer than its own timeout anyway: 60 s in
// Gemini CLI 0.61.0).
const callTimeout = 5 * time.Minute

// DoorPath is the seat's hook door: door/hook.sock in the seat's directory,
// shown read-only in the jail (the socket can be connected to, not replaced).
func DoorPath(s state.Seat) string { return filepath.Join(s.Dir, "door", "hook.sock") }

// Call is one `pantty hook` call handed through the door: the flags it was
// run with and its standard input. The door runs it for its own seat only.
type Call struct {
	Seat       string   `json:"seat"`
	Flag       string   `json:"flag,omitempty"` // the harness's own hook form (harness.HookFlag's name), "" for the plain one
	StatusLine bool     `json:"status_line,omitempty"`
	Args       []string `json:"args,omitempty"`
	Stdin      []byte   `json:"stdin"`
}

// Answer is the hook's outcome as the door ran it: what it printed and its
// exit code, passed back to the harness unchanged.
type Answer struct {
	Code   int    `json:"code"`
	Stdout []byte `json:"stdout,omitempty"`
	Stderr []byte `json:"stderr,omitempty"`
}

// Send hands c (its stdin read from stdin) to the door at path and writes the
// hook's output to stdout and stderr; it returns the hook's exit code. A door
// that cannot be reached fails open, like every hook: one line on stderr,
// exit 0 (nothing recorded; the harness goes on).
func Send(path string, c Call, stdin io.Reader, stdout, stderr io.Writer) int {
	in, err := io.ReadAll(io.LimitReader(stdin, maxCall+1))
	if err == nil && len(in) > maxCall {
		err = fmt.Errorf("stdin is longer than %d bytes", maxCall)
	}
	c.Stdin = in
	var a Answer
	if err == nil {
		a, err = roundTrip(path, c)
	}
	if err != nil {
		fmt.Fprintf(stderr, "pantty hook: the hook door %s: %v (event not recorded; the harness goes on)\n", path, err)
		return 0
	}
	stdout.Write(a.Stdout)
	stderr.Write(a.Stderr)
	return a.Code
}

func roundTrip(path string, c Call) (Answer, error) {
	var a Answer
	conn, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return a, err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(callTimeout))
	if err := json.NewEncoder(conn).Encode(c); err != nil {
		return a, err
	}
	if uc, ok := conn.(*net.UnixConn); ok {
		uc.CloseWrite()
	}
	err = json.NewDecoder(io.LimitReader(conn, 2*maxCall)).Decode(&a)
	return a, err
}

// Door is the serving side, run by `pantty __hookdoor` outside the jail: the
// seat it serves, the pantty binary that records hooks, the hook flags the
// harness's settings use, and the environment the hooks get.
type Door struct {
	Home, Seat, Pantty string
	Flags              []string
	Env                []string
}

// Serve answers calls on ln until it fails (the listener is closed when the
// pane process ends the seat's tree).
func (d Door) Serve(ln net.Listener) error {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return err
		}
		go d.answer(conn)
	}
}

func (d Door) answer(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(callTimeout))
	var c Call
	a := Answer{}
	if err := json.NewDecoder(io.LimitReader(conn, 2*maxCall)).Decode(&c); err != nil {
		a.Stderr = []byte(fmt.Sprintf("pantty hook door: %v\n", err))
	} else if args, err := d.argv(c); err != nil {
		a.Stderr = []byte(fmt.Sprintf("pantty hook door: %v (event not recorded)\n", err))
	} else {
		a = d.run(args, c.Stdin)
	}
	json.NewEncoder(conn).Encode(a)
}

// argv is the `pantty hook` command line for c: this door's home and seat
// (a call for another seat is refused), a flag only from the door's list.
func (d Door) argv(c Call) ([]string, error) {
	if c.Seat != d.Seat {
		return nil, fmt.Errorf("seat %q: this door is seat %q's", c.Seat, d.Seat)
	}
	args := []string{"--home", d.Home, "hook", "--seat", d.Seat}
	if c.Flag != "" {
		if !slices.Contains(d.Flags, c.Flag) {
			return nil, fmt.Errorf("hook form --%s is not this seat's", c.Flag)
		}
		args = append(args, "--"+c.Flag)
	}
	if c.StatusLine {
		args = append(args, "--status-line")
	}
	if len(c.Args) > 0 {
		args = append(append(args, "--"), c.Args...)
	}
	return args, nil
}

func (d Door) run(args []string, stdin []byte) Answer {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.Pantty, args...)
	cmd.Env = d.Env
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	a := Answer{Stdout: out.Bytes(), Stderr: errb.Bytes()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		a.Code = ee.ExitCode()
	case err != nil:
		a.Stderr = append(a.Stderr, fmt.Sprintf("pantty hook door: %v\n", err)...)
	}
	return a
}

// Listen makes the seat's door socket (a stale one from an earlier launch is
// replaced), private to the seat's owner.
func Listen(path string) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	// The pane process hands the socket to `pantty __hookdoor` and closes
	// its own copy: the file must outlive that close.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// WithoutDoor is env without DoorEnv: the hooks the door runs record
// themselves, they must not call the door again.
func WithoutDoor(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return len(kv) > len(DoorEnv) && kv[:len(DoorEnv)+1] == DoorEnv+"="
	})
}
