// Package flight is the one way text reaches a harness: the board door's
// guarded messages, the command door's adapter commands and `pantty measure`'s
// raw controls all go through it, so the rules that keep a delivery safe are
// written once.
//
//   - A Transport carries the keys. Its first implementation is a tmux pane
//     (Pane) over Keys, which a plain tmux client or the control-mode client
//     (tmux.Conn) provides; another screen implements the same five
//     operations instead of copying delivery. Codex's app server has no
//     screen, box or Enter: its client (harness/codex/appserver) sits one
//     level up, at submission and evidence — the driver's asWay beside its
//     paneWay, after the same WriteAhead (docs/codex.md, "The app-server
//     path (experimental, measured on 0.171.0)").
//
//   - A Box reads the harness's input box from what the transport shows:
//     keys go only into a box the adapter recognises, a person's draft is
//     never cleared nor extended, and only pantty's own leftover is cleared
//     (docs/intake.md, "Keys only into the input box").
//
//   - Fill and Enter are the two halves of a submission; between them the
//     caller waits for the paste to settle with Await, off its loop (the
//     driver runs Await in a pane watch and takes the answer as an event):
//     the whole settle, or, on a harness measured to draw a paste only once
//     it has committed, until the box shows it and the pane's change events
//     (Changes) say it stopped redrawing, the settle then a bound (Wait.Still).
//
//   - WriteAhead holds the write-ahead rule: no key before the record saying
//     what is about to be sent is durable. It runs the caller's write and
//     makes the Ahead that Fill takes; nothing else makes one, so a door
//     (or a transport added later) cannot paste text whose record failed.
//     Transport.Put itself is only called outside Fill by `pantty measure`'s
//     raw path, which sends controls to a throwaway harness and delivers no
//     message (seat/measure/paster.go).
//
// Nothing here knows what a seat's records are: the caller says how to
// write them (the board door: the message's artifact and its submitting
// status; the command door: the command's record).
package flight
