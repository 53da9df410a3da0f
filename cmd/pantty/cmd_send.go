package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat"
	"github.com/pantty/pantty/seat/proc"
	"github.com/pantty/pantty/seat/state"
	"github.com/urfave/cli/v2"
)

func sendCommand() *cli.Command {
	return &cli.Command{
		Name:  "send",
		Usage: "the board door: store a message from stdin durably in the seat's inbox and print its id",
		Description: "Whole stdin is one message by default; --lines makes each line a message (blank lines are skipped),\n" +
			"--jsonl reads objects {id, from, board, channel, text}. Each message is stored as it arrives and its id\n" +
			"printed. A refused line is reported with its line number and the stream goes on; the exit code at the\n" +
			"end is 2 if any line was refused. An id already stored with the same text is a duplicate: reported, exit 0;\n" +
			"with a different text it is a conflict: nothing stored, exit 6. An empty stdin (or a terminal) with a\n" +
			"stored --id means that message: with --wait, wait for it again.\n" +
			"With --wait it blocks until the message is final and prints the model's reply on stdout: exit 0 processed,\n" +
			"1 failed (the reason on stderr), 4 not final by --timeout or unknown (the message stays queued; its id on\n" +
			"stderr). With --lines/--jsonl (or --json) --wait prints one JSON result line per message instead.",
		ArgsUsage: "NAME | HOST:NAME",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "id", Usage: "message id (default: generated); the same id is stored once"},
			&cli.StringFlag{Name: "from", Usage: "sender"},
			&cli.StringFlag{Name: "board", Usage: "board name"},
			&cli.StringFlag{Name: "channel", Usage: "channel name"},
			&cli.BoolFlag{Name: "lines", Usage: "each line of stdin is one message"},
			&cli.BoolFlag{Name: "jsonl", Usage: "each line of stdin is a JSON object {id, from, board, channel, text}"},
			&cli.BoolFlag{Name: "wait", Usage: "block until the message is final; print the model's reply (exit 0 processed, 1 failed, 4 timed out or unknown)"},
			&cli.DurationFlag{Name: "timeout", Usage: "with --wait: give up after `D` (exit 4, the message stays queued); 0 waits without limit"},
			&cli.BoolFlag{Name: "json", Usage: "with --wait: print the result as one JSON line (schema in docs/cli.md)"},
			hostFlag(),
		},
		Action: seatSend,
	}
}

func seatSend(c *cli.Context) error {
	if c.NArg() == 1 {
		h, name, remote, err := hostOf(c, c.Args().First())
		if err != nil {
			return err
		}
		if remote {
			return fleetSend(c, h, name)
		}
	}
	s, err := seatArg(c, true)
	if err != nil {
		return err
	}
	if err := proc.RefuseOtherSeat(s, "seat send"); err != nil {
		return err
	}
	cfg, err := liveConfig(s)
	if err != nil {
		return err
	}
	if c.IsSet("id") && c.String("id") == "" {
		return usageErr("--id is empty: give an id, or leave --id out for a generated one")
	}
	base := guard.Message{ID: c.String("id"), From: c.String("from"), Board: c.String("board"), Channel: c.String("channel")}
	if c.Bool("lines") && c.Bool("jsonl") {
		return usageErr("--lines and --jsonl exclude each other")
	}
	if (c.Bool("lines") || c.Bool("jsonl")) && base.ID != "" {
		return usageErr("--id names one message; with --lines or --jsonl every message needs its own id (use --jsonl with an id field)")
	}
	if !c.Bool("wait") && (c.IsSet("timeout") || c.Bool("json")) {
		return usageErr("--timeout and --json go with --wait")
	}
	if c.Duration("timeout") < 0 {
		return usageErr("--timeout %s is negative", c.Duration("timeout"))
	}
	// The watch is set up before anything is stored: if the inbox cannot be
	// watched, nothing was sent.
	var wt *seat.Waiter
	if c.Bool("wait") {
		if wt, err = seat.NewWaiter(s); err != nil {
			return err
		}
		defer wt.Close()
	}
	max := cfg.MaxMessageBytes
	if !c.Bool("lines") && !c.Bool("jsonl") {
		stored := base.ID != "" && isStored(s, base.ID)
		var data []byte
		// A stored id with no text is that message again (`--id ID --wait`
		// after a timeout): a terminal is not read at all, so the hint pantty
		// prints works as pasted.
		if !stored || !isTerminal(os.Stdin) {
			if data, err = io.ReadAll(io.LimitReader(os.Stdin, int64(max)+1)); err != nil {
				return fmt.Errorf("read stdin: %w", err)
			}
		}
		if len(data) > max {
			return fmt.Errorf("%w: message is over the %d-byte limit (max_message_bytes)", state.ErrBadInput, max)
		}
		m := base
		m.Text = string(data)
		res := inbox.EnqueueResult{ID: m.ID, Duplicate: true}
		if stored && len(data) == 0 {
			if wt == nil {
				say("%s already stored", m.ID)
			}
		} else if res, err = store(s, m, max, wt == nil); err != nil {
			return err
		}
		if wt == nil {
			if !res.Duplicate {
				noteStopped(s, res.ID)
			}
			return nil
		}
		return waitOne(s, wt, res.ID, c.Duration("timeout"), c.Bool("json"))
	}
	var sw *streamWaiter
	if wt != nil {
		sw = newStreamWaiter(s, wt, c.Duration("timeout"))
	}
	return sendStream(c, s, base, max, sw)
}

// liveConfig loads seat.toml for a send. A seat.toml that no longer
// validates (a typo made while the seat runs) does not stop the board door of
// a seat whose live driver keeps the configuration it started with: the
// message is stored, within the guard's own size limit, and a warning names
// the error to fix before the next start. With no live driver it is refused.
func liveConfig(s state.Seat) (config.Config, error) {
	cfg, err := s.LoadConfig()
	if !errors.Is(err, state.ErrBadConfig) {
		return cfg, err
	}
	if _, live, lerr := s.LiveOwner(); lerr != nil || !live {
		return cfg, err
	}
	fmt.Fprintf(os.Stderr, "pantty: warning: %v; seat %s's running driver keeps the configuration it started with, so the message is taken (fix seat.toml before its next start)\n", err, s.Name)
	if cfg.MaxMessageBytes <= 0 || cfg.MaxMessageBytes > guard.DefaultMaxMessageBytes {
		cfg.MaxMessageBytes = guard.DefaultMaxMessageBytes
	}
	return cfg, nil
}

// isStored reports whether message id is already in the seat's inbox.
func isStored(s state.Seat, id string) bool {
	_, err := os.Lstat(s.MsgPath(id))
	return err == nil
}

// noteStopped says on stderr that a message stored for a seat with no live
// driver waits there until the seat is started, so a sender is not left to
// guess why nothing happens.
func noteStopped(s state.Seat, id string) {
	if _, live, err := s.LiveOwner(); err == nil && !live {
		fmt.Fprintf(os.Stderr, "pantty: seat %s is not running: %s waits in its queue until 'pantty seat start %s' (or recover) starts it\n", s.Name, id, s.Name)
	}
}

// store enqueues one message and, when show is set, prints its id.
func store(s state.Seat, m guard.Message, max int, show bool) (inbox.EnqueueResult, error) {
	res, err := s.Enqueue(m, max, time.Now())
	if err != nil || !show {
		return res, err
	}
	if res.Duplicate {
		say("%s duplicate: already stored", res.ID)
	} else {
		say("%s", res.ID)
	}
	return res, nil
}

// sendStream stores one message per line as lines arrive, so an endless
// `tail -F board.log | pantty seat send NAME --lines` works. With sw (--wait)
// each message's result line is printed when it settles, instead of its id.
func sendStream(c *cli.Context, s state.Seat, base guard.Message, max int, sw *streamWaiter) error {
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	refused, conflicts := 0, 0
	noted := false // the seat-not-running note is said once per stream
	for n := 1; ; n++ {
		line, tooLong, err := readLine(r, max)
		if len(line) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("read stdin: %w", err)
		}
		m := base
		var lerr error
		switch {
		case tooLong:
			lerr = fmt.Errorf("%w: over the %d-byte limit", state.ErrBadInput, max)
		case c.Bool("jsonl"):
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			m, lerr = decodeJSONL(line, base)
		default:
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			m.Text = string(line)
		}
		if lerr == nil {
			var res inbox.EnqueueResult
			if res, lerr = store(s, m, max, sw == nil); lerr == nil && sw != nil {
				sw.follow(res.ID)
			} else if lerr == nil && !res.Duplicate && !noted {
				noteStopped(s, "each message")
				noted = true
			}
		}
		if lerr != nil {
			switch {
			case errors.Is(lerr, inbox.ErrConflict):
				conflicts++
			case errors.Is(lerr, state.ErrBadInput):
				refused++
			default:
				return fmt.Errorf("line %d: %w", n, lerr)
			}
			fmt.Fprintf(os.Stderr, "pantty: line %d refused: %v\n", n, lerr)
		}
		if err != nil {
			break
		}
	}
	worst := exitOK
	if sw != nil {
		worst = sw.finish()
	}
	switch {
	case refused > 0:
		return codedError{exitBadInput, fmt.Sprintf("%d line(s) refused", refused+conflicts)}
	case conflicts > 0:
		return codedError{exitConflict, fmt.Sprintf("%d line(s) refused: their id is stored with a different text", conflicts)}
	case worst == exitUnknown:
		return codedError{exitUnknown, "some messages are not final or unknown (timed_out or unknown in their result lines); they stay queued"}
	case worst == exitFailed:
		return codedError{exitFailed, "some messages failed (state failed in their result lines)"}
	}
	return nil
}

// readLine reads one line without its line ending; a line over max is drained
// and reported as too long, so one bad line cannot stop the stream.
func readLine(r *bufio.Reader, max int) ([]byte, bool, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > max+2 {
				tooLong, line = true, line[:0]
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if tooLong {
			line = []byte{0} // non-empty marker; the caller refuses it
		}
		return line, tooLong, err
	}
}

// jsonWords says why a --jsonl line did not decode in the sender's words:
// encoding/json's own errors name Go types ("cannot unmarshal number into Go
// struct field .id of type string").
func jsonWords(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return fmt.Sprintf(`want one object like {"id": "...", "text": "..."}, not a JSON %s`, te.Value)
		}
		return fmt.Sprintf("%q must be a string, not a JSON %s", te.Field, te.Value)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func decodeJSONL(line []byte, base guard.Message) (guard.Message, error) {
	var in struct {
		ID      string `json:"id"`
		From    string `json:"from"`
		Board   string `json:"board"`
		Channel string `json:"channel"`
		Text    string `json:"text"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return base, fmt.Errorf("%w: bad JSON object: %s", state.ErrBadInput, jsonWords(err))
	}
	// One object per line: anything after it (a second object) would otherwise be
	// dropped without a word.
	if _, err := dec.Token(); err != io.EOF {
		return base, fmt.Errorf("%w: more than one JSON value on the line", state.ErrBadInput)
	}
	m := base
	m.ID, m.Text = in.ID, in.Text
	if in.From != "" {
		m.From = in.From
	}
	if in.Board != "" {
		m.Board = in.Board
	}
	if in.Channel != "" {
		m.Channel = in.Channel
	}
	return m, nil
}
