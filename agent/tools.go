package agent

import (
	"encoding/json"

	"github.com/memdir/memdir/llm"
)

// Names of the project tools a run offers. The memory tool is memtool.Name
// ("memory").
const (
	ToolReadFile = "read_file"
	ToolGrep     = "grep"
	ToolGlob     = "glob"
	ToolLs       = "ls"
)

// projectToolNames lists the project tools in the order they are offered.
var projectToolNames = []string{ToolReadFile, ToolGrep, ToolGlob, ToolLs}

var projectTools = map[string]llm.Tool{
	ToolReadFile: {
		Name: ToolReadFile,
		Description: `Read a text file of the project, with line numbers. Paths are relative to the project directory (for example src/main.go).
Returns up to 2000 lines by default; use offset and limit to page through longer files. Lines over 2000 characters are cut, and files over 10 MiB or binary files are refused (use grep on those).`,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The file to read, relative to the project directory."},
    "offset": {"type": "integer", "minimum": 1, "description": "The first line to return, counting from 1. Default 1."},
    "limit": {"type": "integer", "minimum": 1, "description": "How many lines to return. Default 2000."}
  },
  "required": ["path"],
  "additionalProperties": false
}`),
	},
	ToolGrep: {
		Name: ToolGrep,
		Description: `Search the contents of the project's text files with a regular expression (Go RE2 syntax: no lookaround or backreferences). Prints path:line:text for each matching line, at most 100 matches; .git, binary files and files over 10 MiB are skipped and symbolic links are not followed.
Narrow the search with path (a directory or a single file) and glob (a file-name pattern such as *.go, or a path pattern such as src/**/*.ts when it contains a slash).`,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "The regular expression to look for in each line."},
    "path": {"type": "string", "description": "A directory or file to search, relative to the project directory. Default: the whole project."},
    "glob": {"type": "string", "description": "Only search files matching this glob: a file name pattern (*.md, *.{go,mod}) or, with a slash, a path pattern below path (docs/**/*.md)."},
    "ignore_case": {"type": "boolean", "description": "Match letters regardless of case. Default false."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`),
	},
	ToolGlob: {
		Name: ToolGlob,
		Description: `Find files and directories of the project by path pattern. * and ? match within one path segment, ** matches any number of directories, [a-z] is a character class and {a,b} either alternative: **/*.go finds every Go file, docs/*.md the Markdown files directly in docs.
Returns at most 200 paths, relative to the project directory, in lexical order; .git is skipped and symbolic links are not followed.`,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "The glob pattern, matched against paths relative to path."},
    "path": {"type": "string", "description": "The directory to search, relative to the project directory. Default: the whole project."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`),
	},
	ToolLs: {
		Name:        ToolLs,
		Description: `List one directory of the project: subdirectories end in /, symbolic links in @, and files show their size. Not recursive; use glob to search deeper.`,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The directory to list, relative to the project directory. Default: the project directory itself."}
  },
  "additionalProperties": false
}`),
	},
}
