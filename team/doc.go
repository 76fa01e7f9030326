// Package team shares the team/ part of a memory directory between the
// members of a team, with the protocol Claude Code's team memory sync speaks.
//
// The package holds the domain: the wire types ([Data], [PutBody],
// [PutResponse], [ErrorResponse]), checksums ([EntryChecksum],
// [RepoChecksum]), validation ([SanitizeKey], [ValidateKey],
// [ValidateKeyPath], and the server's rules for what it stores,
// [ValidateEntries] and [DecodePutBody], which name keys by [KeyRef]), the
// storage contract ([Store], implemented by the
// team/sqlite and team/postgres packages), the server ([Handler]), and the
// client side: [Remote] speaks HTTP to a server and [Client] syncs a local
// team directory through any [Repos] (a Remote in production, a Store in
// tests).
//
// # Protocol
//
// One resource per repository, GET and PUT
// /api/claude_code/team_memory?repo=owner/name. The repository checksum, a
// hash over the sorted entry checksums, is the ETag: GET honours
// If-None-Match (304), PUT honours If-Match (412 on a mismatch). PUT is an
// upsert: keys missing from the body are kept, so deletions never propagate
// unless a client lists keys in the optional "deletes" field. Every PUT is a
// numbered version that view=history lists and version=N reads back.
// docs/format.md is the normative description.
//
// # Concurrency
//
// Stores serialise writers per repository inside the database (a row lock
// on PostgreSQL, an immediate transaction on SQLite) and compare the
// If-Match checksum under that lock, so any number of server replicas may
// share one PostgreSQL database. Nothing is cached in a server process. A
// full GET streams the entries of one version in pages
// ([Store.EntryPage]), so its memory does not grow with the repository. A
// [Client] runs its calls one at a time,
// so several goroutines may share it; use one Client per team directory.
package team
