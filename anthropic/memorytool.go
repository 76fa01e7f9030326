package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/locate"
	"github.com/memdir/memdir/memtool"
	"github.com/memdir/memdir/review"
	"github.com/memdir/memdir/usage"
)

// MemoryTool serves Anthropic's memory tool (memory_20250818) from a local
// directory, for anthropic-sdk-go's tool runner: the model's /memories
// paths map onto the directory, with memtool's checks (no traversal, no
// symlink escapes, atomic writes that never overwrite on create or rename,
// 0600/0700 modes).
//
//	mem, _ := anthropic.NewMemoryTool(dir, nil)
//	runner := client.Beta.Messages.NewToolRunner([]sdk.BetaTool{mem}, sdk.BetaToolRunnerParams{
//		BetaMessageNewParams: sdk.BetaMessageNewParams{Tools: []sdk.BetaToolUnionParam{mem.Definition()}, …},
//	})
//
// Pass the native definition (Definition) in the request's tools: the
// runner then sends the API's own memory tool and dispatches its calls to
// this handler. A failed command is returned to the model as an error
// result with memtool's text.
type MemoryTool struct {
	tool *memtool.Tool
}

var _ sdk.BetaTool = (*MemoryTool)(nil)

// NewMemoryTool returns a memory tool on dir, which must exist. opts are
// memtool's (size caps, a BeforeChange hook for journaling, read-only).
// What opts leaves unset is wired to dir as memdir's own writers are:
//
//   - AfterView: each view of a memory file is counted in the directory's
//     default use log (usage.DefaultPath), as recall counts what it
//     surfaces; a failure to count never fails the view.
//   - Write: every create, str_replace and insert is screened for prompt
//     injection (memdir.Dir.WriteGuard); a suspicious write is not made but
//     held in the directory's review queue ('memdir review'), and the model
//     is told so; any other write of a memory file records
//     "provenance: {by: agent, via: memory-tool, at: …}" in its frontmatter.
//   - Rewrite: the memory files it writes get their code anchors recorded
//     (memdir.AnchorContent) against the git repository holding the working
//     directory, as 'memdir save --dir' does; outside a repository no
//     anchors are recorded. Pass a Rewrite of your own to anchor against
//     another project, or one that returns its data unchanged for none.
func NewMemoryTool(dir string, opts *memtool.Options) (*MemoryTool, error) {
	var o memtool.Options
	if opts != nil {
		o = *opts
	}
	if o.AfterView == nil {
		p, err := usage.DefaultPath(dir, os.LookupEnv)
		if err != nil {
			return nil, fmt.Errorf("memory tool: use log: %w", err)
		}
		o.AfterView = memtool.CountViews(context.Background(), usage.New(p, nil), nil)
	}
	if o.Write == nil {
		d, _, err := review.Open(dir, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("memory tool: %w", err)
		}
		o.Write = d.WriteGuard(&memdir.Provenance{By: memdir.ByAgent, Via: "memory-tool"})
	}
	if o.Rewrite == nil {
		if cwd, err := os.Getwd(); err == nil {
			if root, ok := locate.FindGitRoot(cwd); ok {
				o.Rewrite = func(_ string, data []byte) []byte {
					return memdir.AnchorContent(context.Background(), root, data)
				}
			}
		}
	}
	t, err := memtool.New(dir, &o)
	if err != nil {
		return nil, err
	}
	return &MemoryTool{tool: t}, nil
}

// Definition is the native tool definition to put in a request's Tools.
func (m *MemoryTool) Definition() sdk.BetaToolUnionParam {
	return sdk.BetaToolUnionParam{OfMemoryTool20250818: &sdk.BetaMemoryTool20250818Param{}}
}

// Name is "memory".
func (m *MemoryTool) Name() string { return memtool.Name }

// Description describes the tool for runners that send custom definitions.
func (m *MemoryTool) Description() string { return memtool.Definition().Description }

// InputSchema is the command union's schema, for runners that send custom
// definitions; with Definition in the request it is not sent.
func (m *MemoryTool) InputSchema() sdk.BetaToolInputSchemaParam {
	var s struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	json.Unmarshal(memtool.Definition().InputSchema, &s)
	return sdk.BetaToolInputSchemaParam{Properties: s.Properties, Required: s.Required}
}

// Execute runs one memory command.
func (m *MemoryTool) Execute(ctx context.Context, input json.RawMessage) ([]sdk.BetaToolResultBlockParamContentUnion, error) {
	out, err := m.tool.Execute(ctx, input)
	if err != nil {
		// The runner reports errors as "Error: <text>", as the reference
		// TypeScript runner does; memtool's texts carry no prefix of their
		// own.
		return nil, err
	}
	return []sdk.BetaToolResultBlockParamContentUnion{{OfText: &sdk.BetaTextBlockParam{Text: out}}}, nil
}

// Close releases the directory.
func (m *MemoryTool) Close() error { return m.tool.Close() }
