// Package launch is what a harness launch is given: its environment (an
// allow-list of the caller's plus seat.toml's env, the recorded launch-env.toml:
// HarnessEnv, PlannedEnv, RecordLaunchEnv), its authority (DecideAuthority from
// a harness's Sandbox), the hook command it runs, and the harness binary
// (HarnessBinary, ResolveBinary, InstalledVersion and its cache). The records
// (launch.toml, launch-env.toml, authority.toml) are seat/state.
package launch
