package gates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/seat/state"
)

// writeContract stores a measured contract for claude-code at version with
// every row met except those named in unmet.
func writeContract(t *testing.T, home, version string, asOf time.Time, unmet ...string) {
	t.Helper()
	writeContractOn(t, home, "claude-code", version, "", asOf, unmet...)
}

// writeContractOn stores a measured contract for harness at version on
// transport ("" writes a file from before transports were recorded: tmux).
func writeContractOn(t *testing.T, home, harness, version, transport string, asOf time.Time, unmet ...string) {
	t.Helper()
	c := state.Contract{Harness: harness, Version: version, Build: version + " (" + harness + ")", Transport: transport, AsOf: asOf,
		Revisit: asOf.Add(30 * 24 * time.Hour), FailAfter: asOf.Add(90 * 24 * time.Hour), Path: "test path " + transport}
	for _, name := range state.ContractRows {
		met := true
		for _, u := range unmet {
			met = met && u != name
		}
		c.Rows = append(c.Rows, state.ContractRow{Name: name, Met: met, Value: "measured " + name, Artifact: "/facts/" + name + ".txt"})
	}
	path := state.ContractPath(home, c.Harness, version, transport)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := fsatomic.WriteState(filepath.Dir(path), path, c); err != nil {
		t.Fatal(err)
	}
}

// TestLocalContractJudgesBeforeTheRegistry: a contract measured here for the
// installed version keeps its gates passing past the registry's fail_after,
// an unmet local row fails its gate whatever the registry says, and an
// expired local measurement hands the judgement back to the registry.
func TestLocalContractJudgesBeforeTheRegistry(t *testing.T) {
	t.Parallel()
	pastRegistry := time.Date(2027, 4, 1, 0, 0, 0, 0, time.UTC) // the shipped claude-code rows fail after 2027-03-02
	operational := []string{"compaction", "cancel", "context", "completion", "continuity"}

	home := t.TempDir()
	if v := Local(home, "claude-code", "2.1.328", pastRegistry); v.Gate("compaction").Status != Fail {
		t.Fatalf("without a local measurement the expired registry row must fail: %+v", v.Gate("compaction"))
	}

	writeContract(t, home, "2.1.328", pastRegistry.Add(-24*time.Hour))
	v := Local(home, "claude-code", "2.1.328", pastRegistry)
	for _, name := range operational {
		g := v.Gate(name)
		if g.Status != Pass || len(g.Evidence) == 0 || !strings.HasPrefix(g.Evidence[0].Source, "local measurement of claude-code 2.1.328") {
			t.Errorf("%s gate on a fresh local measurement: %s %s (evidence %+v)", name, g.Status, g.Reason, g.Evidence)
		}
	}

	home = t.TempDir()
	writeContract(t, home, "2.1.328", time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC), "cancel")
	v = Local(home, "claude-code", "2.1.328", time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC))
	if g := v.Gate("cancel"); g.Status != Fail || !strings.Contains(g.Reason, "measured here") || !strings.Contains(g.Fix, "pantty measure contract --harness claude-code") {
		t.Errorf("an unmet local cancel row: %s %q fix %q", g.Status, g.Reason, g.Fix)
	}
	if v.ResidentAllowed {
		t.Error("resident allowed with the cancel row measured unmet")
	}

	// Past the local measurement's own fail_after, the registry judges again.
	v = Local(home, "claude-code", "2.1.328", pastRegistry.Add(90*24*time.Hour))
	if g := v.Gate("cancel"); g.Status != Fail || !strings.Contains(g.Reason, "registry") {
		t.Errorf("an expired local measurement: %s %q", g.Status, g.Reason)
	}
}

// TestLocalContractCoversAnUnlistedVersion: after an upgrade to a version no
// registry range covers, a contract measured here judges it alone.
func TestLocalContractCoversAnUnlistedVersion(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	now := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	if v := Local(home, "claude-code", "3.0.0", now); v.Gate("compaction").Status != Fail {
		t.Fatalf("an unmeasured, unlisted version: %+v", v.Gate("compaction"))
	}
	writeContract(t, home, "3.0.0", now)
	v := Local(home, "claude-code", "3.0.0", now)
	if g := v.Gate("compaction"); g.Status != Pass || !strings.Contains(v.VersionNote, "no registry range covers it") {
		t.Fatalf("3.0.0 measured here: compaction %s %q; version note %q", g.Status, g.Reason, v.VersionNote)
	}
	// The dispatch gate still wants its own measurement of this version.
	if g := v.Gate("dispatch"); g.Status != Fail {
		t.Errorf("dispatch without a measurement of 3.0.0: %s %q", g.Status, g.Reason)
	}
}
