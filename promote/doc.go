// Package promote is the promotion review (memdir promote): Claude Code's
// /remember, which reads every memory layer, proposes what should move
// where and what should go, and changes nothing until asked.
//
// The layers, from the user's own to the project's shared ones:
//
//   - auto memory: the private memories of the memory directory;
//   - team memory: its team/ directory;
//   - the project's CLAUDE.md and .claude/CLAUDE.md (and .claude/rules/),
//     from the git root down to the project root;
//   - CLAUDE.local.md, the user's untracked instructions for the project;
//   - the user's CLAUDE.md (and rules/) in the configuration directory.
//
// Review reports four sections. Promotions: auto memories that belong in
// CLAUDE.md (conventions the whole team follows), in CLAUDE.local.md (how
// this user wants to work) or in team memory (project context everyone
// needs). Cleanup: duplicates (the same text, or nearly), outdated and
// superseded memories. Ambiguous: conflicts between entries and memories
// whose place is unclear. No action: the rest. Without a model the review
// is lexical and deterministic; with one, the model classifies and
// explains, and its answer is checked before it is used.
//
// [Review] builds a [Report]; [SaveReport] keeps it for a later [Apply],
// which carries out the items the user picks as one journal run of the
// memory directory, so one undo reverts them. It is not the root package's
// review queue of held writes (memdir review), which is a different thing.
package promote
