// Package seat is a seat's lifecycle and ownership: start (the driver spawned
// detached, its verdict read from a pipe), stop, retry, the owner lock
// (Acquire, WaitFree), init, remove, withdraw, the wait for messages to be
// final, an internal probe message and the pruning of old records. The seat's
// directory and records are seat/state; the driver loop, the only writer to the
// seat's pane, is seat/driver; the adapter interface is harness. Readers
// (telemetry, feed, gates) import seat/state and never this package: the
// layering test checks it.
package seat
