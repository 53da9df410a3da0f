// Package state is one seat's directory and the records in it: Seat (a value of
// paths: Open, Existing, List), each record type with its path and its binding
// (statedir.File: the one type a file holds, read bounded and strict, written
// atomically), grouped one file per record family, and the size limits of the
// files that are not small TOML (limits.go). Shared files of the state root
// (providers.toml, facts/, recover-last.toml) are bound here too, and so are the
// records other tools keep in a seat (recover's health.toml, measure's
// measure.toml: toolrecords.go).
//
// It is named state, not records, because it holds the directory as well as the
// records: a reader opens a seat and reads it with this package alone, without
// the lifecycle (package seat) or the driver.
//
// Every state file is one fact, written atomically and read strictly, so a
// person can `cat` it and a crash can never leave half of it behind. A missing
// file is fs.ErrNotExist to the caller, which renders it as "unknown", never as
// a zero value.
package state
