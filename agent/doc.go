// Package agent runs a model in a restricted tool loop: the loop background
// memory extraction and consolidation use to read a project and edit the
// memory directory, with nothing else within reach.
//
// [Run] sends a conversation to a [llm.Model] together with the tool
// definitions, carries out the tool calls of each reply, answers them, and
// repeats until the model stops calling tools or the turn limit is reached
// (a turn is one model call; extraction allows 5).
//
// # Tools and policy
//
// The model is offered:
//   - memory: the memory-tool commands of package memtool on
//     Options.MemoryDir, seen as /memories. It may be made read-only
//     (Options.MemoryReadOnly) or limited to changing one file
//     (Options.OnlyFile, for session notes).
//   - read_file, grep, glob and ls: read-only tools over Options.ProjectDir,
//     written in Go on an os.Root, so no path and no symbolic link reaches
//     outside the project. They cap what they read and return, skip .git and
//     binary files, and never follow links while walking. Leaving ProjectDir
//     empty removes them.
//
// Nothing else exists. No shell is ever run: where Claude Code's forked
// agents may run read-only shell commands, this loop has Go tools instead,
// so there is no command line to validate. A call to any other tool (bash,
// Write, Edit, web_fetch, a misspelt name) is answered with an is_error
// result that says which tools are available, and is recorded as denied.
// Malformed input is answered with an error naming the bad key. Neither
// ends the run: the model can correct itself within its turns.
//
// # Record and undo
//
// Options.BeforeChange sees every memory path just before it changes, so the
// caller can journal it; if it fails, the change is not made and the run
// ends. The [Result] lists the memory paths changed (MEMORY.md flagged as
// the index), every tool call with its outcome, the turns used, whether the
// limit was hit, the final text and the summed token usage. A run that fails
// part-way (a model error, a cancelled context) still returns its Result, so
// the files it changed can be undone.
package agent
