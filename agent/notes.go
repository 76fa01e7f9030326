package agent

import (
	"context"

	"github.com/memdir/memdir"
)

// NotesEditor returns a memdir.NotesEditor that lets the restricted loop
// edit session notes: the memory tool over the session-memory directory,
// changes to the notes file only, no project tools. With it, a host updates
// a session's notes in one call:
//
//	upd, err := notes.Update(ctx, msgs, &memdir.SessionUpdateOptions{Editor: agent.NotesEditor(model)})
func NotesEditor(model memdir.Model) memdir.NotesEditor { return notesEditor{model} }

type notesEditor struct{ model memdir.Model }

func (e notesEditor) EditNotes(ctx context.Context, ed *memdir.NotesEdit) (*memdir.NotesEditResult, error) {
	res, err := Run(ctx, &Options{
		Model: e.model, System: ed.System, MemoryDir: ed.Dir, OnlyFile: ed.File,
		MaxTurns: ed.MaxTurns, BeforeChange: ed.BeforeChange,
	}, ed.Messages)
	out := &memdir.NotesEditResult{Text: res.Text, Turns: res.Turns, TurnLimit: res.TurnLimit, ToolCalls: len(res.ToolCalls), Usage: res.Usage}
	for _, c := range res.ToolCalls {
		if c.Denied {
			out.Denied++
		}
	}
	return out, err
}
