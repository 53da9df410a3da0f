package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// cliSection is one section of docs/cli.md: a heading and the text up to the
// next heading of the same or a higher level.
type cliSection struct {
	heading string
	text    string
}

// cliSections splits docs/cli.md at its headings and maps every command a
// heading names (`pantty seat send NAME …`: the longest run of words after
// "pantty" that is a command of the app) to the section under it.
func cliSections(t *testing.T, doc string, commands map[string]bool) map[string]cliSection {
	t.Helper()
	lines := strings.Split(doc, "\n")
	level := func(l string) int {
		n := len(l) - len(strings.TrimLeft(l, "#"))
		if n == 0 || n == len(l) || l[n] != ' ' {
			return 0
		}
		return n
	}
	named := regexp.MustCompile("`pantty ([^`]*)`")
	out := map[string]cliSection{}
	inCode := false
	for i, l := range lines {
		if strings.HasPrefix(l, "```") {
			inCode = !inCode
		}
		lv := level(l)
		if inCode || lv == 0 {
			continue
		}
		end := len(lines)
		for j := i + 1; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], "```") {
				inCode = !inCode
			}
			if k := level(lines[j]); !inCode && k > 0 && k <= lv {
				end = j
				break
			}
		}
		inCode = false
		for _, m := range named.FindAllStringSubmatch(l, -1) {
			words := strings.Fields(m[1])
			for n := len(words); n > 0; n-- {
				if name := strings.Join(words[:n], " "); commands[name] {
					out[name] = cliSection{heading: l, text: strings.Join(lines[i:end], "\n")}
					break
				}
			}
		}
	}
	return out
}

// TestCLIDocsCoverTheCommands keeps docs/cli.md a reference of the command
// tree: every visible command that runs has a section whose heading names it,
// and that section names every flag `--help` prints for it (each spelling,
// `-o` as well as `--output`) and its exit codes, so a new verb or flag
// without documentation — or a flag documented only under another verb —
// fails here. The global flags are named in the text before the first verb.
func TestCLIDocsCoverTheCommands(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	app := newApp()
	type command struct {
		name string
		c    *cli.Command
	}
	var all []command
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			name := strings.TrimSpace(prefix + " " + c.Name)
			all = append(all, command{name, c})
			walk(name, c.Subcommands)
		}
	}
	walk("", app.Commands)
	if len(all) < 30 {
		t.Fatalf("walked only %d commands: the walk is broken", len(all))
	}
	names := map[string]bool{}
	for _, c := range all {
		names[c.name] = true
	}
	sections := cliSections(t, doc, names)
	spell := func(f cli.Flag) []string {
		var out []string
		for _, n := range f.Names() {
			if len(n) == 1 {
				out = append(out, "-"+n)
			} else {
				out = append(out, "--"+n)
			}
		}
		return out
	}
	for _, c := range all {
		if c.c.Action == nil && len(c.c.Subcommands) > 0 {
			// A group (`pantty seat`): its verbs have the sections.
			if !strings.Contains(doc, "pantty "+c.name) {
				t.Errorf("docs/cli.md does not mention `pantty %s`", c.name)
			}
			continue
		}
		s, ok := sections[c.name]
		if !ok {
			t.Errorf("docs/cli.md has no section whose heading names `pantty %s`", c.name)
			continue
		}
		for _, f := range c.c.Flags {
			for _, sp := range spell(f) {
				if !regexp.MustCompile(regexp.QuoteMeta(sp) + `\b`).MatchString(s.text) {
					t.Errorf("docs/cli.md's section %q does not name %s of `pantty %s`", s.heading, sp, c.name)
				}
			}
		}
		if !regexp.MustCompile(`(?i)\bexit`).MatchString(s.text) {
			t.Errorf("docs/cli.md's section %q does not give the exit codes of `pantty %s`", s.heading, c.name)
		}
	}
	intro, _, _ := strings.Cut(doc, "\n## ")
	for _, f := range app.Flags {
		for _, sp := range spell(f) {
			if !strings.Contains(intro, sp) {
				t.Errorf("docs/cli.md's introduction does not name the global flag %s", sp)
			}
		}
	}
}
