package seat

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/pantty/pantty/internal/config"
	"github.com/pantty/pantty/internal/fsatomic"
	"github.com/pantty/pantty/internal/inbox"
	"github.com/pantty/pantty/internal/statedir"
)

// ReadState decodes a TOML state file strictly into v: a key v does not know is an
// error naming the file and line, a type error names the line, and a missing file
// is returned as fs.ErrNotExist (wrapped) so the caller can say "unknown". It is
// for tests and tools that hold only a path (the parser fuzzers); pantty's own
// reads go through the files' bindings below, which use the same decode.
func ReadState(path string, v any) error {
	data, err := ReadRegular(path)
	if err != nil {
		return err
	}
	return fsatomic.DecodeStrict(path, data, v)
}

// The state files' bindings (statedir.File): each file with the one record
// it holds, read bounded and strict (ReadRegular, the limits table), written
// atomically through the seat's tmp/. docs/state.md describes each file.
func bind[T any](s Seat, path string) statedir.File[T] {
	return statedir.Bind[T](s.TmpDir(), path, ReadRegular)
}

// SessionFile is session.toml: the harness session the seat is bound to (its id, pane, launches).
func (s Seat) SessionFile() statedir.File[Session] { return bind[Session](s, s.SessionPath()) }

// IntentFile is intent.toml: what the person wants (running or stopped); recover acts only on seats meant to run.
func (s Seat) IntentFile() statedir.File[Intent] { return bind[Intent](s, s.IntentPath()) }

// HeartbeatFile is heartbeat.toml: the driver's phase and liveness, written on each tick and phase change.
func (s Seat) HeartbeatFile() statedir.File[Heartbeat] { return bind[Heartbeat](s, s.HeartbeatPath()) }

// CursorFile is cursor.toml: the last message closed in queue order and how many are closed.
func (s Seat) CursorFile() statedir.File[inbox.Cursor] { return bind[inbox.Cursor](s, s.CursorPath()) }

// ModeFile is mode.toml: direct or relay. A seat that never had a person at it has none (direct is then the driver's state, and readers say unknown).
func (s Seat) ModeFile() statedir.File[Mode] { return bind[Mode](s, s.ModePath()) }

// CycleFile is handoff/cycle.toml: the compaction cycle under way or last run.
func (s Seat) CycleFile() statedir.File[Cycle] { return bind[Cycle](s, s.CyclePath()) }

// InjectFile is handoff/inject.toml: the session whose start must be given the current handoff.
func (s Seat) InjectFile() statedir.File[Inject] { return bind[Inject](s, s.InjectPath()) }

// ActivityFile is activity.toml: what the seat is doing now, from its own tool calls (telemetry only).
func (s Seat) ActivityFile() statedir.File[Activity] { return bind[Activity](s, s.ActivityPath()) }

// AuthorityFile is authority.toml: what the last launch let the seat's model reach.
func (s Seat) AuthorityFile() statedir.File[Authority] { return bind[Authority](s, s.AuthorityPath()) }

// ContextFile is context.toml: the latest context reading, split into fixed floor and reclaimable part.
func (s Seat) ContextFile() statedir.File[Context] { return bind[Context](s, s.ContextPath()) }

// CleanupFile is cleanup.toml: the marker of a seat that finished its work; its existence is the pending cleanup.
func (s Seat) CleanupFile() statedir.File[Cleanup] { return bind[Cleanup](s, s.CleanupPath()) }

// HarnessExitFile is harness-exit.toml: how the harness last ended, with the words its pane showed.
func (s Seat) HarnessExitFile() statedir.File[HarnessExit] {
	return bind[HarnessExit](s, s.HarnessExitPath())
}

// RecoveryFile is recovery.toml: the ladder's floor and failure bookkeeping (the running rung is derived, never stored).
func (s Seat) RecoveryFile() statedir.File[Recovery] { return bind[Recovery](s, s.RecoveryPath()) }

// LaunchEnvFile is launch-env.toml: what the harness needs from the starting shell's environment (secrets: private).
func (s Seat) LaunchEnvFile() statedir.File[LaunchEnv] { return bind[LaunchEnv](s, s.LaunchEnvPath()) }

// LaunchFile is launch.toml: exactly what the pane was last launched with; `pantty __exec` starts it.
func (s Seat) LaunchFile() statedir.File[LaunchFile] { return bind[LaunchFile](s, s.LaunchPath()) }

// OwnerFile is owner.toml. A pid_start out of range is refused: BurntSushi/toml
// decodes a negative integer into a uint64 by wrapping it (found by
// FuzzReadState), a corrupt record, not a start time.
func (s Seat) OwnerFile() statedir.File[Owner] {
	return bind[Owner](s, s.OwnerPath()).Checked(func(path string, o Owner) error {
		if o.PIDStart > 1<<63-1 {
			return fmt.Errorf("%s: pid_start is out of range (negative in the file?)", path)
		}
		return nil
	})
}

// The files a seat keeps one of per request, message attempt or event. Their
// names are the file format: readers glob them (`seat show`, the feed, prune).

// RequestFile is control/<id>.toml: a control request waiting for the driver.
func (s Seat) RequestFile(id string) statedir.File[Request] {
	return bind[Request](s, s.path("control", id+".toml"))
}

// ResultFile is control/done/<id>.toml: the driver's answer to request id.
func (s Seat) ResultFile(id string) statedir.File[Result] {
	return bind[Result](s, s.path("control", "done", id+".toml"))
}

// ArtifactFile is artifacts/<id>.<attempt>.toml: exactly what one attempt of
// message id pasted.
func (s Seat) ArtifactFile(id string, attempt int) statedir.File[Artifact] {
	return bind[Artifact](s, s.path("artifacts", fmt.Sprintf("%s.%d.toml", id, attempt)))
}

// CompactRecordFile is artifacts/compact-<cycle>.toml: one compaction cycle's
// record, kept after handoff/cycle.toml moves on to the next.
func (s Seat) CompactRecordFile(cycle string) statedir.File[Cycle] {
	return bind[Cycle](s, s.path("artifacts", "compact-"+cycle+".toml"))
}

// RefreshFile is artifacts/refresh-<unix ns>.toml: one refresh decision.
func (s Seat) RefreshFile(at time.Time) statedir.File[RefreshDecision] {
	return bind[RefreshDecision](s, s.path("artifacts", fmt.Sprintf("refresh-%d.toml", at.UnixNano())))
}

// CommandFile is artifacts/command-<unix ns>.toml: one command the command
// door ran.
func (s Seat) CommandFile(at time.Time) statedir.File[CommandRecord] {
	return bind[CommandRecord](s, s.path("artifacts", fmt.Sprintf("command-%d.toml", at.UnixNano())))
}

// CommandRecord is what the command door records of each command it runs
// (CommandFile): only an adapter authors one.
type CommandRecord struct {
	Command string    `toml:"command"`
	Author  string    `toml:"author"`
	At      time.Time `toml:"at"`
}

// ConfigFile is seat.toml as decoded (strict). The person writes it, never
// pantty once it exists; LoadConfig validates what this reads.
func (s Seat) ConfigFile() statedir.File[config.Config] {
	return bind[config.Config](s, s.ConfigPath())
}

// ArtifactFiles binds every attempt's artifact of message id, oldest attempt
// first by name (artifacts/<id>.<attempt>.toml).
func (s Seat) ArtifactFiles(id string) []statedir.File[Artifact] {
	paths, _ := filepath.Glob(filepath.Join(s.ArtifactsDir(), id+".*.toml"))
	out := make([]statedir.File[Artifact], len(paths))
	for i, p := range paths {
		out[i] = bind[Artifact](s, p)
	}
	return out
}

// LaunchFileAt is launch.toml at path, for `pantty __exec`, which is given
// the path (its seat's directory, with tmp/ beside it).
func LaunchFileAt(path string) statedir.File[LaunchFile] {
	return statedir.Bind[LaunchFile](filepath.Join(filepath.Dir(path), "tmp"), path, ReadRegular)
}

// DropAnswerFile is <drop>/<id>.done: the driver's answer to drop request id
// (written in the drop directory itself, which the sandbox can write).
func DropAnswerFile(dir, id string) statedir.File[DropAnswer] {
	return statedir.Bind[DropAnswer](dir, filepath.Join(dir, id+".done"), ReadRegular)
}

// The files of the state root, shared by every seat: temp files in home/tmp.
func homeBind[T any](home, path string) statedir.File[T] {
	return statedir.Bind[T](HomeTmpDir(home), path, ReadRegular)
}

// ProvidersFile is providers.toml: the provider waits every seat honours.
func ProvidersFile(home string) statedir.File[Blocks] {
	return homeBind[Blocks](home, ProvidersPath(home))
}

// LocalFactsFile is facts/<harness>-<shape>.toml: dispatch facts measured here.
func LocalFactsFile(home, harness, shape string) statedir.File[FactsFile] {
	return homeBind[FactsFile](home, FactsPath(home, harness, shape))
}

// ContractFile is facts/<harness>/<version>/contract.toml: the contract
// battery as measured here on one harness version.
func ContractFile(home, harness, version string) statedir.File[Contract] {
	return homeBind[Contract](home, ContractPath(home, harness, version))
}

// versionCacheFile is cache/harness-versions.toml (temp files beside it: the
// cache directory is made on first write).
func versionCacheFile(home string) statedir.File[versionCache] {
	p := VersionCachePath(home)
	return statedir.Bind[versionCache](filepath.Dir(p), p, ReadRegular)
}
