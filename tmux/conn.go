package tmux

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
)

// Conn is a driver's pane commands over one control-mode client (Control)
// that may die: it reconnects once, and after a second death (or a failed
// reconnect) every call goes through the plain per-call client. It has the
// pane operations a seat's transport needs (Capture, SendKeys, Paste) and
// the pane's change events (Follow).
//
// No key is lost or doubled across a death. A key command is sent with an
// acknowledgement on the same line ("send-keys …; set-buffer -b ACK N"):
// tmux runs a line's commands in one pass of its command queue, so either
// both ran or neither. A command whose client died before it answered is
// looked up by its ack number (show-buffer) through the next client: found,
// it ran and is not sent again; else it is sent again.
type Conn struct {
	plain   *Client
	session string
	logf    func(format string, a ...any)

	subsMu sync.Mutex
	subs   map[chan struct{}]struct{} // one per Follow not yet released

	mu         sync.Mutex
	ctl        *Control // nil: none yet (lazy) or fallen back
	starts     int      // control clients started (the second is the one reconnect)
	fallen     bool     // the plain client only, from now on
	following  int      // Follow calls not yet released
	ack        string   // this Conn's ack buffer
	seq        int      // the last ack number sent
	Reconnects int      // for tests and logs: control clients that died under this Conn
}

// NewConn returns a Conn for session name on c's server; the control client
// starts with the first call. logf hears deaths and the fallback (nil: none).
func NewConn(c *Client, name string, logf func(string, ...any)) *Conn {
	b, _ := bufferName()
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Conn{plain: c, session: name, logf: logf, subs: map[chan struct{}]struct{}{}, ack: strings.Replace(b, "pantty-", "pantty-ack-", 1)}
}

// changed wakes every follower: each has its own channel with one pending
// wake-up (coalesced: the follower looks at the pane itself), so two waits
// at once both hear a change, where one shared channel gave it to one.
func (n *Conn) changed() {
	n.subsMu.Lock()
	defer n.subsMu.Unlock()
	for c := range n.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// Close ends the control client and removes the ack buffer.
func (n *Conn) Close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ctl != nil {
		n.ctl.Close()
		n.ctl = nil
	}
	n.fallen = true
	if n.seq > 0 {
		_, _ = n.plain.run(context.Background(), nil, "delete-buffer", "-b", n.ack)
	}
}

// Control reports the control client in use (nil: the plain client); for tests.
func (n *Conn) Control() *Control {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.ctl
}

// current is the control client to use, started if due; nil: go plain.
// Called with n.mu held.
func (n *Conn) current(ctx context.Context) *Control {
	if n.ctl != nil {
		select {
		case <-n.ctl.Done():
			n.ctl = nil
			n.Reconnects++
			n.logf("tmux control client ended")
		default:
			return n.ctl
		}
	}
	if n.fallen || n.starts >= 2 {
		if !n.fallen {
			n.logf("tmux control client: falling back to one tmux process per command")
		}
		n.fallen = true
		return nil
	}
	n.starts++
	k, err := n.plain.Control(ctx, n.session, n.changed)
	if err != nil {
		n.logf("tmux control client: %v (one tmux process per command instead)", err)
		n.fallen = true
		return nil
	}
	n.ctl = k
	if n.following > 0 {
		if _, err := k.run(ctx, n.plain.timeout(), "refresh-client -f !no-output", 1); err != nil {
			n.logf("tmux control client: pane output: %v", err)
		}
	}
	return k
}

// do runs one command through the control client, again through the next
// one when the client died first (and the ack says it did not run), or
// through the plain client. line is the control-mode line (ok false: this
// command cannot go as one), blocks its answers, acked whether line carries
// the ack; plain runs it as a process.
func (n *Conn) do(ctx context.Context, line string, blocks int, acked bool, plain func() (string, error)) (string, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	seq := 0
	if acked {
		n.seq++
		seq = n.seq
		line += " ; set-buffer -b " + n.ack + " -- " + strconv.Itoa(seq)
		blocks++
	}
	for try := 0; try < 3; try++ {
		k := n.current(ctx)
		if k == nil {
			if seq > 0 && try > 0 && n.acked(ctx, nil, seq) {
				return "", nil
			}
			return plain()
		}
		if seq > 0 && try > 0 && n.acked(ctx, k, seq) {
			return "", nil
		}
		out, err := k.run(ctx, n.plain.timeout(), line, blocks)
		if !errors.Is(err, errDied) {
			if err != nil {
				e := &Error{Args: []string{line}, Stderr: err.Error(), Err: err}
				if errors.Is(err, context.DeadlineExceeded) {
					e.Kind = ErrTimeout
				} else if ctx.Err() == nil {
					e.Kind = classify(err.Error())
				}
				return "", e
			}
			return lineOf(out), nil
		}
	}
	return plain()
}

// acked reports whether the ack buffer holds seq: the command carrying it ran.
func (n *Conn) acked(ctx context.Context, k *Control, seq int) bool {
	var got string
	if k != nil {
		out, err := k.run(ctx, n.plain.timeout(), "show-buffer -b "+n.ack, 1)
		if err != nil {
			return false
		}
		got = lineOf(out)
	} else {
		out, err := n.plain.run(ctx, nil, "show-buffer", "-b", n.ack)
		if err != nil {
			return false
		}
		got = out
	}
	return strings.TrimSpace(got) == strconv.Itoa(seq)
}

// Capture is Client.Capture through the control client.
func (n *Conn) Capture(ctx context.Context, paneID string) (string, error) {
	if err := checkPane(paneID, []string{"capture-pane"}); err != nil {
		return "", err
	}
	return n.do(ctx, "capture-pane -p -J -t "+paneID, 1, false, func() (string, error) { return n.plain.Capture(ctx, paneID) })
}

// SendKeys is Client.SendKeys through the control client, acknowledged.
func (n *Conn) SendKeys(ctx context.Context, paneID string, keys ...string) error {
	plain := func() (string, error) { return "", n.plain.SendKeys(ctx, paneID, keys...) }
	line, ok := keyLine(paneID, keys)
	if err := checkPane(paneID, []string{"send-keys"}); err != nil || !ok || len(keys) == 0 || slicesHasEmpty(keys) {
		_, err := plain() // the plain client's own checks say why
		return err
	}
	_, err := n.do(ctx, line, 1, true, plain)
	return err
}

// Paste is Client.Paste through the control client, acknowledged: a
// uniquely named buffer set from the command line, pasted bracketed and
// deleted. Text a command line cannot carry (NUL, invalid UTF-8) goes
// through the plain client's stdin.
func (n *Conn) Paste(ctx context.Context, paneID string, text []byte) error {
	plain := func() (string, error) { return "", n.plain.Paste(ctx, paneID, text) }
	name, err := bufferName()
	if err != nil {
		return err
	}
	line, ok := pasteLine(paneID, name, text)
	if err := checkPane(paneID, []string{"paste-buffer"}); err != nil || !ok || len(text) == 0 {
		_, err := plain()
		return err
	}
	_, err = n.do(ctx, line, 2, true, plain)
	if err != nil && !errors.Is(err, ErrTimeout) && ctx.Err() == nil {
		// set-buffer may have run before paste-buffer failed: leave no text behind.
		_, _ = n.plain.run(ctx, nil, "delete-buffer", "-b", name)
	}
	return err
}

// Follow turns the pane's change events on until release is called: changed,
// this caller's own, receives (coalesced) whenever the session's panes print. ok is false when
// no control client carries them (the caller looks at the screen on a
// timer instead).
func (n *Conn) Follow(ctx context.Context) (changed <-chan struct{}, release func(), ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := n.current(ctx)
	if k == nil {
		return nil, func() {}, false
	}
	n.following++
	if n.following == 1 {
		if _, err := k.run(ctx, n.plain.timeout(), "refresh-client -f !no-output", 1); err != nil {
			n.following--
			return nil, func() {}, false
		}
	}
	ch := make(chan struct{}, 1)
	n.subsMu.Lock()
	n.subs[ch] = struct{}{}
	n.subsMu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			n.subsMu.Lock()
			delete(n.subs, ch)
			n.subsMu.Unlock()
			n.mu.Lock()
			defer n.mu.Unlock()
			n.following--
			if n.following == 0 && n.ctl != nil {
				_, _ = n.ctl.run(context.Background(), n.plain.timeout(), "refresh-client -f no-output", 1)
			}
		})
	}, true
}

// slicesHasEmpty reports an empty key name (the plain client refuses it).
func slicesHasEmpty(keys []string) bool {
	for _, k := range keys {
		if k == "" {
			return true
		}
	}
	return false
}
