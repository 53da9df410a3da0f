package main

// "Did you mean": a near-miss command (`pantty stauts`, `pantty seat sned`)
// names the command it was probably meant to be, and a near-miss flag
// (`pantty seat send a --wiat`) the command line with the flag it was probably
// meant to be, so the correction is one paste away.

import (
	"slices"
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

// argvKey is where runArgs leaves the command line as typed in the app's
// Metadata: a flag typo's hint is that line with the one word corrected.
const argvKey = "argv"

// unknownFlag is the usage error urfave/cli's flag parsing returned (err),
// for the command whose flags are flags; a flag pantty does not have gets the
// typed command line with the nearest defined flag in its place when one is
// close, else the command's --help to list them. Any other usage error is
// passed on in one line.
func unknownFlag(ctx *cli.Context, err error, flags []cli.Flag) error {
	const prefix = "flag provided but not defined: -"
	typed, ok := strings.CutPrefix(err.Error(), prefix)
	if !ok {
		return usageErr("%s", err.Error())
	}
	argv, _ := ctx.App.Metadata[argvKey].([]string)
	if best := nearestFlag(typed, slices.Concat(flags, ctx.App.Flags)); best != "" {
		if line := replaceFlag(argv, typed, best); line != "" {
			return usageErr("%s (did you mean '%s'?)", err.Error(), line)
		}
	}
	where := "pantty"
	if path := cmdPath(ctx); path != "" {
		where += " " + path
	}
	return usageErr("%s ('%s --help' lists them)", err.Error(), where)
}

// nearestFlag is the visible flag name closest to typed by the rule of
// nearest (a one-letter typed name guesses nothing: every short flag is near
// it), "" when none is.
func nearestFlag(typed string, flags []cli.Flag) string {
	if len(typed) < 2 {
		return ""
	}
	var cmds []*cli.Command
	for _, f := range flags {
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			continue
		}
		names := f.Names()
		cmds = append(cmds, &cli.Command{Name: names[0], Aliases: names[1:]})
	}
	return nearest(typed, cmds)
}

// replaceFlag is argv as a line to paste, the program named pantty and the
// first word that spells the flag typed (-typed or --typed, with or without
// =VALUE, before "--") spelled --best; "" when no word does.
func replaceFlag(argv []string, typed, best string) string {
	if len(argv) == 0 {
		return ""
	}
	words, found := []string{"pantty"}, false
	for i, a := range argv[1:] {
		if a == "--" {
			words = append(words, argv[1+i:]...)
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !found && strings.HasPrefix(a, "-") && name == typed {
			a, found = "--"+best, true
			if hasValue {
				a += "=" + value
			}
		}
		words = append(words, a)
	}
	if !found {
		return ""
	}
	for i, w := range words {
		words[i] = shellWord(w)
	}
	return strings.Join(words, " ")
}

// shellWord is w as a shell reads it back: as is when it has nothing the shell
// would split or expand, else in double quotes (the hint itself sits in single
// quotes).
func shellWord(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-") == "" {
		return w
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	return `"` + r.Replace(w) + `"`
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
