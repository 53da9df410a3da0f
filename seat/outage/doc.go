// Package outage is the policy for a provider or means that does not answer:
// the provider blocks every seat honours (RecordBlock, RefusalBlock, the reset
// times a refusal's words give: ParseReset) and the ladder's run-time plan
// (PlanFor, PlanOf, RunningConfig: the floor, the rung a seat runs on, the
// blocks that push it down). The records themselves (providers.toml,
// recovery.toml) are seat/state.
package outage
