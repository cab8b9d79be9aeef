// Package fileutil holds falkon-ooc's durable-file code in one place, like
// Prometheus's tsdb/fileutil: files and directories are built under a
// temporary name in the same directory, fsynced, renamed to their final
// name and the directory fsynced, so that a final name holds either the
// previous content or the complete new content, never a partial file.
//
// # Overview
//
// [WriteFile] writes a file that way, inside a temporary directory made by
// [MkdirTemp]. [MkdirTemp] makes the temporary names, which carry their owner: the process id and the
// process's start time, so that [Leftovers] and [Clean] can tell the
// leftovers of a killed run from the files of a live one. [Exchange] and
// [RenameNoReplace] are the atomic renames a directory install needs;
// [SyncDir] makes a rename durable. [Lock] takes an exclusive, non-blocking
// advisory lock (flock) so that two writers of one output do not race.
//
// # Concurrency
//
// Every function is safe for concurrent use. A [Locker] is owned by one
// goroutine.
//
// # Invariants
//
// A temporary name has the form .BASE.falkon-tmp-PID-START-RAND (BASE the
// final base name), where START is the owner's start time in clock ticks
// since boot (Linux) or 0 where it is unknown. A name whose owner cannot be
// shown dead is never removed: on systems without /proc, only names whose
// process id is unused count as dead.
//
// Ownership is proved by content, never by name: this is the one rule of
// what falkon-ooc removes, and a user's file is never removed, whatever
// its name. An entry is removed only when its content proves it
// falkon-ooc's ([Owned]): a temporary directory holding [DirMarker] (every
// temporary directory, and the one WriteFile builds each file in, holds
// it until its content takes its final name), a store's segment files
// (magic "FOOC") with their meta.json, or a file starting with a model's,
// checkpoint's or Nyström basis's magic number. An empty file, a file
// named like an output (.csv, .json, .parquet, .png) or a folder holding
// only a meta.json proves nothing and stays, under either name shape
// (the older .BASE.tmp-PID-START-RAND too).
package fileutil
