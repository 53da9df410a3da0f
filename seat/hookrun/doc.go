// Package hookrun is `pantty hook`, the process every harness hook (and
// tmux's pane-died hook) runs: it turns one hook payload into one event file
// in the seat's events/ directory, records tool activity and the status line,
// and materializes the handoff before a compaction. It is a separate process
// from the driver, which consumes the events; the adapters whose harnesses
// speak another hook dialect (Codex, Gemini CLI) translate their payload and
// call Run.
package hookrun
