// Package proc is a seat's OS processes: the pane's argv (`pantty __exec
// launch.toml`), the processes of a seat's launches and their descendants
// (LaunchProcs) and how they are ended (EndLaunch: SIGTERM, LaunchGrace, then
// SIGKILL rounds on pidfds), the harness's pid under `__exec` (HarnessPID), and
// whether the caller runs inside a seat (Inside, RefuseInside). A process's
// identity (pid + start time) is internal/procid.
package proc
