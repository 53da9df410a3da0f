package main

// `pantty completion bash|zsh|fish` and `pantty man`: generated from the command
// definitions, so they cannot drift from the flags pantty really takes.

import (
	"fmt"
	"os"
	"strings"

	"github.com/pantty/pantty/seat/state"
	"github.com/urfave/cli/v2"
)

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: source <(pantty completion bash)",
		ArgsUsage: "bash|zsh|fish",
		Description: "bash and zsh ask pantty itself for the words at each TAB (urfave/cli's --generate-bash-completion),\n" +
			"so they always match this binary; fish gets a static script generated from the command definitions.\n" +
			"Exit 0; 2 another shell.",
		Action: completionAction,
	}
}

// The bash and zsh scripts are urfave/cli v2's autocomplete/ scripts with the
// program name filled in; bash's works without the bash-completion package
// (its fallback reads COMP_WORDS itself), and a completed word ends with a
// space as in other commands (urfave's -o nospace made "pantty se<TAB>" run
// into the next word).
const bashCompletion = `# pantty bash completion: source <(pantty completion bash)
# Without the bash-completion package (no _init_completion): bash's own words.
_pantty_init_completion() {
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  words=("${COMP_WORDS[@]}")
  cword=$COMP_CWORD
}
_pantty_complete() {
  local cur opts words cword requestComp
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  if declare -F _init_completion >/dev/null 2>&1; then
    _init_completion -n "=:" || return
  else
    _pantty_init_completion -n "=:" || return
  fi
  words=("${words[@]:0:$cword}")
  if [[ "$cur" == "-"* ]]; then
    requestComp="${words[*]} ${cur} --generate-bash-completion"
  else
    requestComp="${words[*]} --generate-bash-completion"
  fi
  opts=$(eval "${requestComp}" 2>/dev/null)
  COMPREPLY=($(compgen -W "${opts}" -- ${cur}))
  return 0
}
complete -o bashdefault -o default -F _pantty_complete pantty
`

const zshCompletion = `#compdef pantty
# pantty zsh completion: source <(pantty completion zsh)  (after compinit)
_pantty() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == "-"* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _pantty pantty
`

func completionAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageErr("usage: pantty completion bash|zsh|fish")
	}
	switch sh := c.Args().First(); sh {
	case "bash":
		fmt.Fprint(c.App.Writer, bashCompletion)
	case "zsh":
		fmt.Fprint(c.App.Writer, zshCompletion)
	case "fish":
		s, err := c.App.ToFishCompletion()
		if err != nil {
			return err
		}
		fmt.Fprint(c.App.Writer, s)
	default:
		return usageErr("completion %q: want bash, zsh or fish", sh)
	}
	return nil
}

// completeSeatNames makes every command whose first argument is a seat NAME
// complete it with the seats under the state root (and its flags after a
// "-"), so TAB offers what exists instead of file names.
func completeSeatNames(cmds []*cli.Command) {
	for _, c := range cmds {
		completeSeatNames(c.Subcommands)
		if len(c.Subcommands) > 0 || c.BashComplete != nil || !strings.HasPrefix(c.ArgsUsage, "NAME") && !strings.HasPrefix(c.ArgsUsage, "[NAME]") {
			continue
		}
		flags := cli.DefaultCompleteWithFlags(c)
		c.BashComplete = func(ctx *cli.Context) {
			if n := len(os.Args); n > 2 && strings.HasPrefix(os.Args[n-2], "-") {
				flags(ctx)
				return
			}
			if ctx.NArg() > 0 {
				return // the seat is named: what follows is not a seat
			}
			home, err := homeOf(ctx)
			if err != nil {
				return
			}
			names, _ := state.List(home)
			for _, n := range names {
				fmt.Fprintln(ctx.App.Writer, n)
			}
		}
	}
}

func manCommand() *cli.Command {
	return &cli.Command{
		Name:  "man",
		Usage: "print the pantty(1) manual page (roff), generated from the command definitions: pantty man | man -l -",
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				return usageErr("man takes no arguments")
			}
			page, err := c.App.ToManWithSection(1)
			if err != nil {
				return err
			}
			fmt.Fprint(c.App.Writer, strings.TrimLeft(page, "\n"))
			return nil
		},
	}
}
