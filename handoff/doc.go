// Package handoff holds a seat's handoff note: what the seat knows that exists
// only in its context (procedure detail, resume pointers), materialized to disk
// before every compaction and read back into the fresh context after it.
//
// A compaction is not reversible, so the note is verified, not requested: each
// materialization is numbered and hashed (without its volatile fields), and the
// caller refuses to compact when the hash did not change. The package imports
// nothing of pantty: the caller injects the one atomic write function every
// state file goes through.
package handoff
