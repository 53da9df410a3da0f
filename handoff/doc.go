// Package handoff will hold the seat's handoff note: materialized before every
// compaction, re-injected after it, with history and a "really changed" check.
//
// Not implemented yet: the compaction cycle arrives with the Claude Code adapter
// issue. The package exists so the import direction (handoff imports nothing of
// pantty; seat imports handoff) is fixed from the start.
package handoff
