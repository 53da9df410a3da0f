// Package config is seat.toml: the Config a person declares, its strict
// validation and documented defaults, the recovery ladder it declares (rungs,
// [recovery], [done]), the names pantty reserves in a harness's environment,
// and the commented template `pantty seat init` writes, walked from Config
// itself so it cannot drift from it.
//
// It reads no state but the workdir it checks and knows no seat: the seat
// (package seat) finds the file, decodes it strictly and passes the registered
// harness names to Validate; what the ladder's records say at run time (the
// floor, provider blocks, the running rung) is the seat's, not the file's.
package config
