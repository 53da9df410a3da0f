// Package crashtest holds pantty's crash-consistency tests (docs/reliability.md):
// a writer of every state file is killed before each system call of its write,
// and what a reader then sees must be the old content or the new one, never a
// torn file; `pantty seat send` is traced to show that a message and its
// directory entry are fsynced before it answers.
//
// The kills are placed with ptrace (a small tracer in Go, no strace needed), so
// "before each step" means before each system call the writing thread makes,
// not a guess at timing. The package has tests only; it is linux/amd64, where
// the tracer reads the system call registers, and skips elsewhere.
package crashtest
