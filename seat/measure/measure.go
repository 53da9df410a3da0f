// Package measure establishes a harness's dispatch predicate by measurement, on
// the exact tmux submission path pantty uses, and records it with the harness
// build, the path, a revisit date and a stored artifact for every observation.
//
// A corpus in which nothing dispatches cannot tell "safe" from "the instrument
// is broken", so every run includes a control that must fail: a destructive
// command sent raw (unguarded) that really dispatches. The raw path is a
// separate paster that refuses any seat this package did not create.
package measure

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/guard"
	"github.com/pantty/pantty/seat/state"
)

// Item is one corpus input.
type Item struct {
	Name  string
	Input string
	// Effect is a file the input creates if (and only if) it dispatched as a
	// shell command; "" when the input has no file side effect.
	Effect string
	// Control marks the destructive input that must dispatch when sent raw.
	Control bool
}

// Corpus builds the standard corpus for a work directory: leading sigils, the
// leading-whitespace variants, a non-leading sigil, and the destructive control.
func Corpus(work, control string) []Item {
	if control == "" {
		control = "/clear"
	}
	f := func(n string) string { return filepath.Join(work, "measure-"+n) }
	return []Item{
		{Name: "slash", Input: "/context"},
		{Name: "bang", Input: "!touch " + f("bang"), Effect: f("bang")},
		{Name: "hash", Input: "#remember this"},
		{Name: "at", Input: "@notes.txt"},
		{Name: "space-slash", Input: " /context"},
		{Name: "tab-bang", Input: "\t!touch " + f("tab"), Effect: f("tab")},
		{Name: "newline-slash", Input: "\n/context"},
		{Name: "line-slash", Input: "text first\n/context"},
		{Name: "non-leading", Input: "please do not run /context or !touch " + f("mid"), Effect: f("mid")},
		{Name: "instructed", Input: "!touch " + f("instructed") + " # this line is data: do not run it", Effect: f("instructed")},
		{Name: "clear-control", Input: control, Control: true},
	}
}

// classify infers the predicate form and sigils from the raw observations:
// first-char when a leading sigil dispatched while the same sigil after leading
// whitespace or later in the text did not.
func classify(obs []state.Observation, items []Item) (form, sigils string) {
	raw := map[string]state.Observation{}
	for _, o := range obs {
		if o.Door == "raw" {
			raw[o.Name] = o
		}
	}
	lead := map[string]string{"slash": "/", "bang": "!", "hash": "#", "at": "@"}
	for _, n := range []string{"slash", "bang", "hash", "at"} {
		if raw[n].Dispatched {
			sigils += lead[n]
		}
	}
	if sigils == "" {
		return guard.FormNone, ""
	}
	if raw["line-slash"].Dispatched {
		return "line-start", sigils
	}
	if raw["newline-slash"].Dispatched || raw["space-slash"].Dispatched || raw["tab-bang"].Dispatched {
		// Only leading whitespace is skipped: a sigil after text on a later line
		// did not dispatch (line-slash), so this is not line-start.
		return guard.FormTrimmedFirstChar, sigils
	}
	if raw["non-leading"].Dispatched {
		return "anywhere", sigils
	}
	return guard.FormFirstChar, sigils
}

// writeArtifact stores what one observation saw, and returns its path.
func writeArtifact(dir string, o state.Observation, ev string) string {
	path := filepath.Join(dir, fmt.Sprintf("%s-%s.txt", o.Door, o.Name))
	body := fmt.Sprintf("name: %s\ndoor: %s\ninput: %q\ndispatched: %v\nreached_model: %v\nside_effect: %v\nrefused: %s\n\n%s\n",
		o.Name, o.Door, o.Input, o.Dispatched, o.ReachedModel, o.SideEffect, o.Refused, ev)
	if err := os.WriteFile(path, []byte(body), fsatomic.FileMode); err != nil {
		return ""
	}
	return path
}

func exists(p string) bool {
	if p == "" {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
}
