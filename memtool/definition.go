package memtool

import (
	"encoding/json"

	"github.com/memdir/memdir/llm"
)

// description explains the tool to models that do not have the native
// memory tool built in (it is the text they see in the tool list).
const description = `Read and maintain your persistent memory directory, ` + Prefix + `. Files there survive between conversations: check what you already know before starting, and record what will help later (facts about the user, decisions, lessons learned), keeping files short and up to date.

All paths start with ` + Prefix + `. Commands, chosen with "command":
- view: show a file with line numbers, or list a directory two levels deep. Keys: path; optional view_range [start, end] (1-based, end -1 means the end of the file).
- create: make a new file. Keys: path, file_text. Fails if the file already exists; edit it instead.
- str_replace: replace text that occurs exactly once in a file. Keys: path, old_str, new_str.
- insert: insert text after a line. Keys: path, insert_line (0 inserts at the top), insert_text.
- delete: delete a file or directory. Keys: path.
- rename: move or rename a file or directory. Keys: old_path, new_path. Fails if new_path exists.`

// inputSchema is a flat JSON schema of the command union. A flat object with
// a "command" enum is accepted by every OpenAI-compatible server, where a
// oneOf of six shapes is not.
const inputSchema = `{
  "type": "object",
  "properties": {
    "command": {
      "type": "string",
      "enum": ["view", "create", "str_replace", "insert", "delete", "rename"],
      "description": "The operation to perform."
    },
    "path": {
      "type": "string",
      "description": "File or directory, starting with ` + Prefix + ` (view, create, str_replace, insert, delete)."
    },
    "view_range": {
      "type": "array",
      "items": {"type": "integer"},
      "minItems": 2,
      "maxItems": 2,
      "description": "view only: [start, end] lines to show, 1-based and inclusive; end -1 means the end of the file."
    },
    "file_text": {
      "type": "string",
      "description": "create only: the content of the new file."
    },
    "old_str": {
      "type": "string",
      "description": "str_replace only: the exact text to replace; it must occur exactly once."
    },
    "new_str": {
      "type": "string",
      "description": "str_replace only: the replacement text (may be empty)."
    },
    "insert_line": {
      "type": "integer",
      "minimum": 0,
      "description": "insert only: the line after which to insert; 0 inserts before the first line."
    },
    "insert_text": {
      "type": "string",
      "description": "insert only: the text to insert."
    },
    "old_path": {
      "type": "string",
      "description": "rename only: the current path, starting with ` + Prefix + `."
    },
    "new_path": {
      "type": "string",
      "description": "rename only: the new path, starting with ` + Prefix + `; it must not exist yet."
    }
  },
  "required": ["command"],
  "additionalProperties": false
}`

// Definition describes the memory tool as an ordinary function tool, for
// models without the native memory_20250818 tool (OpenAI-compatible servers,
// local models). Calls to it are handled by [Tool.Execute] like native ones.
func Definition() llm.Tool {
	return llm.Tool{
		Name:        Name,
		Description: description,
		InputSchema: json.RawMessage(inputSchema),
	}
}
