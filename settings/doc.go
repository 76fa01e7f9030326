// Package settings reads and changes the two switches of Claude Code's
// /memory command, autoMemoryEnabled and autoDreamEnabled, in Claude Code's
// settings files.
//
// [Resolve] says what each switch is and which environment variable or
// settings file decided it, building on [memdir.Locate] and
// [memdir.ReadSettings], which the root package keeps because locating the
// memory directory reads the same files. [SetUser] writes keys into the
// user's settings file, keeping every other key as written, and journals the
// change with [memdir.EditExternalFile] so that [memdir.Dir.Undo] reverts it.
package settings
