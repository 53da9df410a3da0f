package main

// "Did you mean": a near-miss command (`pantty stauts`, `pantty seat sned`)
// names the command it was probably meant to be, so the correction is one
// paste away.

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// unknownCommand is the usage error for a command pantty does not have at the
// level it was typed (ctx is the parent's context, as urfave/cli gives it to
// CommandNotFound), with the nearest visible command when one is close.
func unknownCommand(ctx *cli.Context, name string) error {
	cmds := ctx.App.Commands
	path := ""
	if ctx.Command != nil && len(ctx.Command.Subcommands) > 0 {
		cmds = ctx.Command.Subcommands
		path = cmdPath(ctx)
	}
	where := "pantty"
	if path != "" {
		where += " " + path
	}
	if best := nearest(name, cmds); best != "" {
		return usageErr("unknown command %q (did you mean '%s %s'?)", name, where, best)
	}
	return usageErr("unknown command %q ('%s --help' lists them)", name, where)
}

// nearest returns the visible command name (or alias) closest to typed: at an
// edit distance of at most 2 (a swap of two neighbours counts 1), or of which
// typed is a prefix; "" when none is close enough to be a fair guess.
func nearest(typed string, cmds []*cli.Command) string {
	best, bestD := "", 3
	for _, c := range cmds {
		if c.Hidden {
			continue
		}
		for _, n := range c.Names() {
			d := editDistance(typed, n)
			if len(typed) >= 3 && strings.HasPrefix(n, typed) && d > 1 {
				d = 1
			}
			if d < bestD {
				best, bestD = c.Name, d
			}
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance: insertions, deletions,
// substitutions and swaps of two neighbouring letters each count 1.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
