package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// interspersed moves a leaf command's flags in front of its positional
// arguments. urfave/cli v2 stops parsing flags at the first positional, but the
// documented forms put flags after the seat name (`pantty seat send NAME
// --lines`). Everything after "--" is left exactly as given.
func interspersed(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	cmds := app.Commands
	flags := app.Flags
	i := 1
	var leaf *cli.Command
	for i < len(args) {
		a := args[i]
		if strings.HasPrefix(a, "-") && a != "--" {
			out = append(out, a)
			i++
			if takesValue(flags, a) && !strings.Contains(a, "=") && i < len(args) {
				out = append(out, args[i])
				i++
			}
			continue
		}
		var next *cli.Command
		for _, c := range cmds {
			if c.HasName(a) {
				next = c
			}
		}
		if next == nil {
			break
		}
		out = append(out, a)
		i++
		leaf, cmds, flags = next, next.Subcommands, next.Flags
		if len(cmds) == 0 {
			break
		}
	}
	if leaf == nil || leaf.SkipFlagParsing || len(leaf.Subcommands) > 0 {
		return args
	}
	var fl, pos []string
	for i < len(args) {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i:]...)
			break
		}
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			fl = append(fl, a)
			i++
			if takesValue(flags, a) && !strings.Contains(a, "=") && i < len(args) {
				fl = append(fl, args[i])
				i++
			}
			continue
		}
		pos = append(pos, a)
		i++
	}
	out = append(out, fl...)
	return append(out, pos...)
}

// takesValue reports whether the flag token names a flag that takes a value.
func takesValue(flags []cli.Flag, tok string) bool {
	name := strings.TrimLeft(tok, "-")
	name, _, _ = strings.Cut(name, "=")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}
