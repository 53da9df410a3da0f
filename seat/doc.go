// Package seat holds everything that is one seat except the loop that drives it:
// its directory of state files and the records in them, its declared
// configuration and ladder, the single owner of its inbox, the inbox's place and
// cursor, the two doors (board text through the guard, adapter commands through
// the allow-list), the adapter interface, and start/stop. The driver loop, the
// only writer to the seat's pane, is seat/driver; readers import this package
// and never that one.
//
// Every state file is one fact, written atomically through fsatomic.WriteState (internal/fsatomic)
// and read strictly through ReadState, so a person can `cat` it and a crash can never leave
// half of it behind. A missing file is fs.ErrNotExist to the caller, which renders
// it as "unknown", never as a zero value.
package seat
