package main

import (
	"os"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestCLIDocsCoverTheCommands keeps docs/cli.md true to the command tree: every
// visible command's full name and every one of its flags is named there, so a
// new verb or flag without documentation fails here.
func TestCLIDocsCoverTheCommands(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	var walk func(prefix string, cmds []*cli.Command)
	n := 0
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			name := strings.TrimSpace(prefix + " " + c.Name)
			n++
			if !strings.Contains(text, "pantty "+name) {
				t.Errorf("docs/cli.md does not mention `pantty %s`", name)
			}
			for _, f := range c.Flags {
				flag := "--" + f.Names()[0]
				if len(f.Names()[0]) == 1 {
					flag = "-" + f.Names()[0]
				}
				if !strings.Contains(text, flag) {
					t.Errorf("docs/cli.md does not mention %s of `pantty %s`", flag, name)
				}
			}
			walk(name, c.Subcommands)
		}
	}
	app := newApp()
	for _, f := range app.Flags {
		if !strings.Contains(text, "--"+f.Names()[0]) {
			t.Errorf("docs/cli.md does not mention the global flag --%s", f.Names()[0])
		}
	}
	walk("", app.Commands)
	if n < 30 {
		t.Fatalf("walked only %d commands: the walk is broken", n)
	}
}
