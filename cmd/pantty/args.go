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
	// A completion request must stay last, where urfave/cli looks for it.
	if len(args) < 2 || args[len(args)-1] == "--generate-bash-completion" {
		return args
	}
	args = globalsFirst(app, args)
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

// globalsFirst moves the app's own flags (--home) from wherever they are before
// "--" to right after the program name: urfave/cli only reads them there.
func globalsFirst(app *cli.App, args []string) []string {
	var globals, rest []string
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if strings.HasPrefix(a, "-") && isGlobal(app, a) {
			globals = append(globals, a)
			if takesValue(app.Flags, a) && !strings.Contains(a, "=") && i+1 < len(args) {
				i++
				globals = append(globals, args[i])
			}
			continue
		}
		rest = append(rest, a)
	}
	return append(append([]string{args[0]}, globals...), rest...)
}

// isGlobal reports whether the flag token names one of the global flags
// (--help is the app's too, but after a command it asks for that command's).
func isGlobal(app *cli.App, tok string) bool {
	name, _, _ := strings.Cut(strings.TrimLeft(tok, "-"), "=")
	for _, f := range app.Flags {
		if f == cli.HelpFlag {
			continue
		}
		for _, n := range f.Names() {
			if n == name {
				return true
			}
		}
	}
	return false
}
