// Package recover is pantty's external recovery parent: `pantty recover`, run
// every minute by cron, launchd or a systemd timer (Install writes the entry,
// Check asserts it runs). Each run is one Sweep over a state root:
//
//   - take the one global lock (a second run exits 0 saying who sweeps; a lock
//     held past five intervals exits 4 naming its holder);
//   - process cleanup markers (the finalizer: verify the workdir, stop the
//     seat, remove the marker; a failed check leaves it for the next sweep);
//   - for every seat meant to run: observe (state files without any lock, one
//     tmux list-panes per socket), classify ok / dead (with a cause) / unknown,
//     act on dead only, and verify revival (a fresh heartbeat from the new
//     driver, the harness up on the same session) before clearing the failure
//     counter and the backoff;
//   - lower the demotion floor after repeated unverified means recoveries, and
//     raise it again after good turns (the running rung itself is derived by
//     the driver from the floor and the provider blocks, never stored).
//
// Unknown is never acted on and never silent. A healthy seat costs one
// health.toml write and nothing else. docs/recover.md is the full description.
//
// recover imports seat and tmux; nothing imports it but cmd/pantty.
package recover
