// Package harness is the boundary between pantty and the harnesses it drives:
// the one Adapter interface every harness implements, the Capabilities
// struct that says what else it can do (a zero field: it cannot), the
// registry of adapters (Register, AdapterFor), the measure rig a harness
// offers `pantty measure`, and what pantty derives from an adapter — its
// command door rules, its dispatch facts, the authority a launch gives its
// model. It sits above seat (its methods take a state.Seat) and below the
// driver and the adapters: seat holds no harness knowledge but the names
// seat.toml may use.
package harness
