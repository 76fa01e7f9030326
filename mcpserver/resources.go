package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/prompt"
)

// Resource URIs.
const (
	// IndexURI is MEMORY.md as an agent loads it.
	IndexURI = "memdir://MEMORY.md"
	// TeamIndexURI is team/MEMORY.md as an agent loads it (team memory on).
	TeamIndexURI = "memdir://team/MEMORY.md"
	// MemoryTemplate reads one memory file: {+path} is its path relative
	// to the memory directory, such as team/project_release.md.
	MemoryTemplate  = "memdir://memory/{+path}"
	memoryURIPrefix = "memdir://memory/"
)

const markdown = "text/markdown"

func (s *server) addResources(srv *mcp.Server) {
	srv.AddResource(&mcp.Resource{
		URI:         IndexURI,
		Name:        "MEMORY.md",
		Title:       "Memory index",
		Description: "The memory index, one line per memory, as it is loaded at the start of a conversation (cut to 200 lines and 25,000 characters, with a warning when cut).",
		MIMEType:    markdown,
	}, s.readIndex(false))
	if s.opts.Team {
		srv.AddResource(&mcp.Resource{
			URI:         TeamIndexURI,
			Name:        "team/MEMORY.md",
			Title:       "Team memory index",
			Description: "The shared team memory index, as it is loaded at the start of a conversation.",
			MIMEType:    markdown,
		}, s.readIndex(true))
	}
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: MemoryTemplate,
		Name:        "memory",
		Title:       "Memory file",
		Description: "One memory file, frontmatter and body, by its path relative to the memory directory (the file names MEMORY.md links to).",
		MIMEType:    markdown,
	}, s.readMemory)
}

func (s *server) readIndex(team bool) mcp.ResourceHandler {
	return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		loaded, err := s.dir.LoadIndex(team)
		if err != nil {
			return nil, err
		}
		text := loaded.Text
		if !loaded.Exists || strings.TrimSpace(text) == "" {
			text = "MEMORY.md is empty: no memories have been saved here yet.\n"
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: markdown, Text: text}}}, nil
	}
}

// readMemory serves one memory file. The path in the URI is decoded once and
// must then pass memdir.CleanMemoryFilePath (no traversal, encoded or not, no
// hidden or absolute paths, Markdown files only); the file is read through
// the directory's os.Root, so no link leads outside it either.
func (s *server) readMemory(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rel, err := MemoryPathFromURI(uri)
	if err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: modelText(err)}
	}
	m, data, err := s.dir.Read(ctx, rel)
	switch {
	case errors.Is(err, memdir.ErrNotFound) || err == nil && m.Path != rel:
		return nil, mcp.ResourceNotFoundError(uri)
	case errors.Is(err, memdir.ErrInvalid):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: modelText(err)}
	case err != nil:
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: markdown, Text: string(data)}}}, nil
}

// MemoryPathFromURI returns the memory path a memdir://memory/ URI names,
// relative to the memory directory, or an error wrapping memdir.ErrInvalid
// when it is not a URI of that form or names a path outside the directory.
func MemoryPathFromURI(uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, memoryURIPrefix)
	if !ok {
		return "", fmt.Errorf("resource %q: memory URIs start with %s: %w", uri, memoryURIPrefix, memdir.ErrInvalid)
	}
	if strings.ContainsAny(rest, "?#") {
		return "", fmt.Errorf("resource %q: a memory URI takes no query or fragment: %w", uri, memdir.ErrInvalid)
	}
	p, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("resource %q: bad percent-encoding: %w", uri, memdir.ErrInvalid)
	}
	rel, err := memdir.CleanMemoryFilePath(p)
	if err != nil {
		return "", fmt.Errorf("resource %q: %w", uri, err)
	}
	return rel, nil
}

// Prompt argument values.
const (
	argMode      = "mode"
	argWithIndex = "with_index"
	argSearch    = "search"
)

func (s *server) addPrompts(srv *mcp.Server) {
	def := prompt.Individual
	if s.opts.Team {
		def = prompt.Team
	}
	srv.AddPrompt(&mcp.Prompt{
		Name:        "memory",
		Title:       "Memory system prompt",
		Description: "The instructions for using this memory directory, to put in an agent's system prompt: what to save in each of the four types, what not to save, how to save, when to read and how far to trust a memory.",
		Arguments: []*mcp.PromptArgument{
			{Name: argMode, Description: fmt.Sprintf("individual (one private directory), team (private plus the shared team/ directory) or daily-log (long-lived sessions appending to a daily log); default %s", def)},
			{Name: argWithIndex, Description: "true appends MEMORY.md as it is loaded, for clients that do not read the memdir://MEMORY.md resource"},
			{Name: argSearch, Description: "true adds how to search past context: the memory files, then the project's session transcripts"},
		},
	}, s.getPrompt(def))
}

func (s *server) getPrompt(def prompt.Mode) mcp.PromptHandler {
	return func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		args := req.Params.Arguments
		mode := def
		if v := strings.TrimSpace(args[argMode]); v != "" {
			m, err := prompt.ParseMode(v)
			if err != nil || m == prompt.Agent {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt argument mode %q: want individual, team or daily-log", v)}
			}
			mode = m
		}
		withIndex, err := boolArg(args, argWithIndex)
		if err != nil {
			return nil, err
		}
		search, err := boolArg(args, argSearch)
		if err != nil {
			return nil, err
		}
		opts := &prompt.Options{
			Mode:            mode,
			Dir:             s.dir.Path(),
			ExtraGuidelines: []string{"Through the memdir MCP server the same directory is also reachable with tools: save writes a memory file and its MEMORY.md line in one step, recall finds the memories relevant to a request, forget removes one, and the memory tool edits the files directly under the path /memories."},
		}
		if search {
			if s.opts.Location == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "prompt argument search: this server was not given the project's location, so it does not know where the session transcripts are"}
			}
			opts.SearchDir = s.opts.Location.TranscriptDir()
		}
		text, err := prompt.Build(opts)
		if err != nil {
			return nil, err
		}
		if withIndex {
			areas := []bool{false}
			if mode == prompt.Team {
				areas = append(areas, true)
			}
			for _, team := range areas {
				idx, err := s.dir.LoadIndex(team)
				if err != nil {
					return nil, err
				}
				if idx.Exists {
					indexRel := memdir.EntrypointName
					if team {
						indexRel = memdir.TeamDirName + "/" + memdir.EntrypointName
					}
					text += "\n" + prompt.IndexContext(s.dir.Abs(indexRel), idx.Text, team) + "\n"
				}
			}
		}
		return &mcp.GetPromptResult{
			Description: fmt.Sprintf("memory system prompt (%s mode) for %s", mode, s.dir.Path()),
			Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
		}, nil
	}
}

func boolArg(args map[string]string, name string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(args[name])) {
	case "", "false", "no", "0":
		return false, nil
	case "true", "yes", "1":
		return true, nil
	}
	return false, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("prompt argument %s %q: want true or false", name, args[name])}
}
