// Package jail is pantty's own OS isolation for a harness that has no sandbox
// of its own (Gemini CLI 0.61.0: its --sandbox needs docker, podman or runsc,
// none of which a plain Linux host has): the whole harness runs under
// bubblewrap, with the state root ($PANTTY_HOME), every seat's drop directory
// and the tmux sockets hidden, a private /tmp, its own pid and IPC namespaces,
// every capability dropped, the file system read-only except the workdir, the
// harness's own home and the seat's drop directory, and the network kept (the
// model API). The harness's hooks run inside it too, so they reach pantty
// through the seat's hook door (door.go): a Unix socket, read-only in the
// jail, served outside it by `pantty __hookdoor` under the pane process, which
// runs the real `pantty hook` for this seat only.
//
// What it cannot close (docs/gemini.md, "Isolation"): the model's shell runs
// with the harness's authority, so it can forge its own seat's hook events
// through the door (never another seat's); Unix sockets of the host outside
// the hidden directories stay reachable when their permissions allow (the
// network namespace is shared, abstract sockets included); as root the jail's
// processes keep uid 0 (without capabilities), so root-owned files on the
// writable binds are theirs.
package jail
