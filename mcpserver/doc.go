// Package mcpserver serves a memory directory over the Model Context Protocol,
// so that any MCP client (Claude Code, Claude Desktop, an IDE, an agent
// framework) gets the same file-based memory Claude Code keeps.
//
// [New] returns an *mcp.Server with:
//
//   - tools: memory (the memory-tool commands view, create, str_replace,
//     insert, delete and rename over the directory, seen as /memories),
//     recall (a query in, the relevant memories out), save (a memory file and
//     its MEMORY.md line in one step) and forget (a memory and its line out);
//   - resources: MEMORY.md as an agent loads it (memdir://MEMORY.md, and
//     memdir://team/MEMORY.md when team memory is on) and every memory file
//     through the template memdir://memory/{+path};
//   - a prompt, memory, that returns the memory system prompt;
//   - server instructions saying how to use all of it.
//
// Run it on stdio with server.Run(ctx, &mcp.StdioTransport{}), or over
// streamable HTTP with [NewHandler].
//
// # Errors
//
// Failures of a tool call (an unknown memory, a bad type, a path outside the
// directory) are tool results with isError set and a message written for the
// model, never protocol errors, so the model can read them and correct
// itself. Resource reads that name no memory answer with the protocol's
// "resource not found" error.
//
// # Undo and concurrency
//
// Every change is journaled before it is made, so 'memdir undo' reverts it:
// save and forget journal a run each through the directory; each call of the
// memory tool that changes files is one run of kind "mcp". Writes by the
// memory tool hold the directory's cross-process lock (the one every memdir
// command takes), so they never interleave with another process updating
// MEMORY.md. Any number of sessions and processes may use one directory at
// once on one machine.
//
// # Sessions
//
// recall remembers, per MCP session, which memories it has already surfaced
// and how many bytes: a memory is not surfaced twice in one session, and a
// session stops receiving memories after 60 KB, as in Claude Code. The record
// is kept in memory and dropped when the session ends. Over stateless HTTP
// every request is a session of its own, so nothing is remembered between
// requests.
package mcpserver
