package inbox

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
)

// Tally counts the final messages the retention rule has removed from the
// inbox, so that "messages processed / failed, ever" stays a true counter when
// old messages are pruned: the total is the tally plus the final messages
// still stored. Pruning names its batch in Pruning before it deletes anything
// and clears it after, so a prune cut short by a crash is neither lost nor
// counted twice (a message named there is counted in the tally even while its
// files still exist).
type Tally struct {
	Processed int            `toml:"processed"`
	Failed    map[string]int `toml:"failed"` // by failure reason
	Pruning   []string       `toml:"pruning"`
}

// Totals is what a seat's inbox has finished, ever: processed, and failed by
// reason.
type Totals struct {
	Processed int
	Failed    map[string]int
}

// TallyPath is inbox/pruned.toml.
func (b Box) TallyPath() string { return filepath.Join(b.Root, "pruned.toml") }

// ReadTally reads inbox/pruned.toml; a seat that never pruned has a zero tally.
func (b Box) ReadTally() (Tally, error) {
	var t Tally
	err := b.readStatus(b.TallyPath(), &t)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return t, err
}

// Totals adds the final messages of v to the tally, leaving out those the
// tally already counts (an interrupted prune's batch). Processed messages are
// counted from their directory; only failed ones are decoded, for their
// reason. A message set aside as unreadable counts as failed, unreadable.
func (b Box) Totals(t Tally, v View) Totals {
	tot := Totals{Processed: t.Processed, Failed: map[string]int{}}
	for r, n := range t.Failed {
		tot.Failed[r] = n
	}
	for _, r := range v.Final {
		switch {
		case slices.Contains(t.Pruning, r.ID):
		case r.State == StateProcessed:
			tot.Processed++
		default:
			e, ok := b.ReadFinal(v, r)
			if ok {
				countFinal(&tot.Processed, tot.Failed, e.Status)
			}
		}
	}
	for _, e := range v.Open {
		if !slices.Contains(t.Pruning, e.Msg.ID) {
			countFinal(&tot.Processed, tot.Failed, e.Status)
		}
	}
	return tot
}

// countFinal adds one message's final state to a processed count and a
// failed-by-reason count; a message not final adds nothing.
func countFinal(processed *int, failed map[string]int, st Status) {
	switch st.State {
	case StateProcessed:
		*processed++
	case StateFailed:
		failed[st.Reason]++
	}
}

// CountPruned adds batch to the tally and names it as being pruned; ids the
// tally already names (a prune the driver did not finish) are not added again.
func (t *Tally) CountPruned(batch []Entry) {
	if t.Failed == nil {
		t.Failed = map[string]int{}
	}
	for _, e := range batch {
		if slices.Contains(t.Pruning, e.Msg.ID) {
			continue
		}
		countFinal(&t.Processed, t.Failed, e.Status)
		t.Pruning = append(t.Pruning, e.Msg.ID)
	}
}
