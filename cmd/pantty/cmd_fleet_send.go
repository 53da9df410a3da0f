package main

// `pantty seat send HOST:SEAT`: the board door of a seat on another host,
// through ssh. The remote pantty stores and waits as it does at home and its
// exit code is this one's; what the network adds is a connection that can drop
// mid-way, so every remote message carries an id (the person's, or one made
// here) and a dropped send is sent again with the same id: the remote inbox
// stores an id once, and a --wait sent again waits for the stored message.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/pantty/pantty/internal/fleet"
	"github.com/pantty/pantty/internal/guard"
	"github.com/urfave/cli/v2"
)

// sendRetries is how often a dropped remote send is sent again, after 1 s, 2 s
// and 4 s: a connection that drops once in a while is carried, a host that is
// gone is said (exit 4) within seconds, with the command that waits again.
const sendRetries = 3

// maxRemoteStdin bounds what a remote send reads from stdin before it sends it
// (the remote applies the seat's own limit): a retry sends the same bytes.
const maxRemoteStdin = 64 << 20

func fleetSend(c *cli.Context, h fleet.Host, name string) error {
	args := []string{"seat", "send", name}
	for _, f := range []string{"from", "board", "channel"} {
		if v := c.String(f); v != "" {
			args = append(args, "--"+f, v)
		}
	}
	args = append(args, boolArgs(c, "lines", "jsonl", "wait", "json")...)
	if c.IsSet("timeout") {
		args = append(args, "--timeout", c.Duration("timeout").String())
	}
	stream := c.Bool("lines") || c.Bool("jsonl")
	id := c.String("id")
	if id != "" {
		args = append(args, "--id", id)
	}
	var data []byte
	// A stored --id with a terminal for stdin is "that message again": the
	// remote reads nothing, and neither does this side.
	if id == "" || !isTerminal(os.Stdin) {
		var err error
		if data, err = io.ReadAll(io.LimitReader(os.Stdin, maxRemoteStdin+1)); err != nil {
			return fmt.Errorf("read stdin: %w", err)
		}
		if len(data) > maxRemoteStdin {
			return usageErr("stdin is over %d bytes: a remote send holds it whole to send it again after a dropped connection", maxRemoteStdin)
		}
	}
	if id == "" && !stream {
		id = guard.NewMessageID(time.Now())
		args = append(args, "--id", id)
	}
	// A stream is sent again only when every line names its id: a line
	// without one would get a new id on the remote each time.
	retry := !stream || c.Bool("jsonl") && everyLineHasID(data)
	target := h.Name + ":" + name
	for attempt := 0; ; attempt++ {
		r := h.Run(context.Background(), fleet.Call{Args: args, Stdin: bytes.NewReader(data), Stdout: os.Stdout, Stderr: os.Stderr})
		if !r.Retryable() || !retry || attempt == sendRetries {
			if r.Unknown() {
				return codedError{exitUnknown, r.Reason + "; " + unsentHint(c, target, id, stream)}
			}
			return remoteExit(r)
		}
		pause := time.Second << attempt
		fmt.Fprintf(os.Stderr, "pantty: %s; sending again in %s with the same id%s (an id is stored once)\n", r.Reason, pause, idWords(id))
		time.Sleep(pause)
	}
}

// unsentHint is what a person pastes after a remote send whose answer is
// unknown: wait for the id again, or look at the inbox.
func unsentHint(c *cli.Context, target, id string, stream bool) string {
	if !stream && c.Bool("wait") {
		return fmt.Sprintf("the message may be stored: wait for it with: pantty seat send %s --id %s --wait", target, id)
	}
	if !stream {
		return fmt.Sprintf("the message may be stored: send it again with --id %s, or look: pantty seat inbox %s", id, target)
	}
	return "some lines may be stored: pantty seat inbox " + target
}

func idWords(id string) string {
	if id == "" {
		return ""
	}
	return " " + id
}

// everyLineHasID reports whether every non-blank JSON line names its id.
func everyLineHasID(data []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxRemoteStdin)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == "" {
			return false
		}
	}
	return sc.Err() == nil
}
