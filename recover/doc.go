// Package recover will be the external recovery parent run by cron, launchd or a
// systemd timer: observe every seat meant to run, classify it ok / dead /
// unknown, act only on dead, and verify revival.
//
// Not implemented yet (the unattended-recovery issue). The package exists so the
// import direction (recover imports seat and tmux; nothing imports recover but
// cmd) is fixed from the start.
package recover
