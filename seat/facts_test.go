package seat_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/seat/seattest"
	"github.com/pantty/pantty/seat/state"
)

// A local measurement takes precedence over the shipped facts, and a predicate
// form the guard does not implement stops submission instead of pasting a
// string the guard cannot vouch for.
func TestLocalFactsOfAnUnimplementedFormBlockSubmission(t *testing.T) {
	t.Parallel()
	h := seattest.New(t, "facts")
	f := state.FactsFile{Harness: "sim", Shape: config.ShapeResident, Form: "line-start", Sigils: "/", ControlOK: true, AsOf: time.Now()}
	if err := os.MkdirAll(filepath.Join(h.Home, "facts"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := fsatomic.WriteState(filepath.Join(h.Home, "tmp"), state.FactsPath(h.Home, "sim", config.ShapeResident), f); err != nil {
		t.Fatal(err)
	}
	h.Start()
	h.Send("m1", "hello")
	h.WaitFor("the driver to say it is blocked", 15*time.Second, func() bool {
		hb, err := h.Seat().HeartbeatFile().Read()
		return err == nil && strings.Contains(hb.Waiting, "blocked")
	})
	if st := h.Status("m1"); st.State != inbox.StateQueued {
		t.Fatalf("m1 is %s, want queued (nothing may be pasted)", st.State)
	}
	if n := len(h.Requests()); n != 0 {
		t.Fatalf("%d requests reached the model", n)
	}
	if !strings.Contains(h.DriverLog(), "line-start") {
		t.Fatalf("the driver log does not name the facts it used:\n%s", h.DriverLog())
	}
}
