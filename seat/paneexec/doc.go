// Package paneexec is `pantty __exec launch.toml`, the pane's first process:
// it starts the harness as its child with exactly the recorded environment and
// stays its parent for the harness's whole life — a child subreaper, so every
// process the harness starts (setsid and double forks included) keeps the
// pane as an ancestor; it forwards the signals a supervisor sends, ends its
// whole tree when its terminal hangs up or it is told to terminate (SIGTERM,
// then SIGKILL after proc.LaunchGrace), reaps orphans, kills what is left when
// the harness exits, and exits as the harness did. Recognising such a process
// and ending a seat's launch (seat.LaunchProcs, seat.EndLaunch, proc.KillGroup,
// proc.HarnessPID) stays in seat, which knows the seat's paths.
package paneexec
