package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/internal/termtext"
	"github.com/urfave/cli/v2"
)

func seatInbox(c *cli.Context) error {
	if c.NArg() == 1 {
		remote, err := remoteSeat(c, c.Args().First(), func(name string) []string {
			return append([]string{"seat", "inbox", name}, boolArgs(c, "json")...)
		})
		if remote || err != nil {
			return err
		}
	}
	s, err := seatArg(c, true)
	if err != nil {
		return err
	}
	es, err := s.Entries()
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return seatInboxJSON(s, es)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tREASON\tATTEMPTS\tMENTIONS\tFROM\tTEXT")
	for _, e := range es {
		text := termtext.Cut(e.Msg.Text, 40)
		if e.Msg.Text == "" && e.Status.Detail != "" {
			text = termtext.Cut(e.Status.Detail, 60) // a message set aside: why
		}
		from := e.Msg.From
		if from == "" {
			from = "-"
		}
		reason := e.Status.Reason
		if reason == "" {
			reason = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", e.Msg.ID, e.Status.State, termtext.Line(reason), e.Status.Attempts, guard.MentionCount(e.Msg.Text), termtext.Line(from), text)
	}
	return tw.Flush()
}
