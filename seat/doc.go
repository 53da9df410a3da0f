// Package seat holds everything that is one seat: its directory of state files,
// its declared configuration, the single owner of its inbox, the inbox and cursor,
// the two doors (board text through the guard, adapter commands through the
// allow-list), and the driver loop that is the only writer to the seat's pane.
//
// Every state file is one fact, written atomically through fsatomic.WriteState (internal/fsatomic)
// and read strictly through ReadState, so a person can `cat` it and a crash can never leave
// half of it behind. A missing file is fs.ErrNotExist to the caller, which renders
// it as "unknown", never as a zero value.
package seat
