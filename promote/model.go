package promote

// The model review: the request that asks a model to classify, and the
// checks its answer passes before it is used.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/memdir/memdir"
	"github.com/memdir/memdir/internal/jsonx"
	"github.com/memdir/memdir/internal/mdtext"
	"github.com/memdir/memdir/llm"
)

const reviewSystem = `You review the memory layers of a coding agent and propose where each memory belongs. Nothing you propose is applied without the user's approval.

Layers:
- auto: private memories the agent saved for this user and project (refs M…)
- team: memories shared with everyone on the project (refs M…)
- project: CLAUDE.md instructions checked into the repository (refs R…)
- local: CLAUDE.local.md, this user's untracked instructions for the project (refs R…)
- user: the user's own CLAUDE.md, for every project (refs R…)

Sections and kinds:
- promotions: "to-claude-md" (an auto memory that is a convention the whole team follows), "to-claude-local-md" (an auto memory about how this user wants to work), "to-team" (an auto project or reference memory everyone on the project needs; only when team memory is in use). Give "rule": the one-line instruction to add, in the memory's language.
- cleanup: "duplicate" or "near-duplicate" (the same fact stated elsewhere), "outdated" (a project memory about work that is over), "superseded" (marked as replaced). Set "remove" to the ref of the auto memory to drop, or "" when nothing should be removed automatically.
- ambiguous: "conflict" (entries that contradict each other) or "unclear" (no clear place). Explain what the user must decide.
- no_action: "keep" (the memory is where it belongs).

Only auto memories can be promoted or removed. Use only the refs listed. Every auto memory should appear in exactly one item. The lexical findings are hints from word overlap: confirm or reject them. Keep reasons to one sentence.

Answer with JSON only: {"items": [{"section": "...", "kind": "...", "refs": ["M1", ...], "rule": "", "remove": "", "reason": "..."}]}`

var reviewSchema = json.RawMessage(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"object","properties":{` +
	`"section":{"type":"string","enum":["promotions","cleanup","ambiguous","no_action"]},` +
	`"kind":{"type":"string","enum":["to-claude-md","to-claude-local-md","to-team","duplicate","near-duplicate","outdated","superseded","conflict","unclear","keep"]},` +
	`"refs":{"type":"array","items":{"type":"string"}},"rule":{"type":"string"},"remove":{"type":"string"},"reason":{"type":"string"}},` +
	`"required":["section","kind","refs","rule","remove","reason"],"additionalProperties":false}}},"required":["items"],"additionalProperties":false}`)

// reviewRequest builds the model request: every entry with its ref, and the
// lexical findings as hints.
func (rv *reviewer) reviewRequest(userContext string, lexicalItems []Item) *llm.Request {
	var b strings.Builder
	fmt.Fprintf(&b, "Today is %s. Team memory is %s.\n\n## Memories\n", rv.now.Format("2006-01-02"), map[bool]string{true: "in use", false: "not in use"}[rv.teamInUse])
	for _, e := range rv.entries {
		if !e.isMemory() {
			continue
		}
		fmt.Fprintf(&b, "[%s] %s · %s · %s\nname: %s\ndescription: %s\n%s\n\n", e.Ref, e.Layer, typeWord(e.Type), e.Path, e.Name, e.Text, cutRunes(strings.TrimSpace(e.body), reviewExcerpt))
	}
	b.WriteString("## Instructions\n")
	for _, e := range rv.entries {
		if !e.isMemory() {
			fmt.Fprintf(&b, "[%s] %s · %s: %s\n", e.Ref, e.Layer, e.Display, cutRunes(e.Text, reviewExcerpt))
		}
	}
	b.WriteString("\n## Lexical findings\n")
	hints := 0
	for _, it := range lexicalItems {
		if it.Kind == KindKeep {
			continue
		}
		var refs []string
		for _, s := range it.Subjects {
			refs = append(refs, s.Ref)
		}
		fmt.Fprintf(&b, "- %s %s: %s\n", it.Kind, strings.Join(refs, ", "), it.Reason)
		hints++
	}
	if hints == 0 {
		b.WriteString("(none)\n")
	}
	if c := strings.TrimSpace(userContext); c != "" {
		fmt.Fprintf(&b, "\n## Additional context from the user\n%s\n", c)
	}
	return &llm.Request{
		System:     reviewSystem,
		Messages:   []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock(b.String())}}},
		Schema:     reviewSchema,
		SchemaName: "memory_review",
		MaxTokens:  reviewReplyTokens,
	}
}

// modelItems asks the model and checks its answer. Any item that names an
// unknown ref, puts a kind in the wrong section, promotes or removes
// something other than an auto memory, or promotes without a rule makes
// the whole answer unusable: a model that invents paths is not trusted
// with the rest. Memories the answer leaves out are kept.
func (rv *reviewer) modelItems(ctx context.Context, m llm.Model, userContext string, lexicalItems []Item) ([]Item, llm.Usage, error) {
	reply, usage, err := rv.askModel(ctx, m, userContext, lexicalItems)
	if err != nil {
		return nil, usage, err
	}
	byRef := map[string]*reviewEntry{}
	for _, e := range rv.entries {
		byRef[e.Ref] = e
	}
	covered := map[*reviewEntry]bool{}
	var items []Item
	for n, r := range reply.Items {
		it, es, err := rv.modelItem(r, byRef)
		if err != nil {
			return nil, usage, fmt.Errorf("the model's item %d is unusable: %v", n+1, err)
		}
		for _, e := range es {
			covered[e] = true
		}
		items = append(items, it)
	}
	for _, e := range rv.entries {
		if e.isMemory() && !covered[e] {
			items = append(items, Item{Section: SectionNoAction, Kind: KindKeep, Subjects: subjects(e), Reason: "the model proposed nothing for it"})
		}
	}
	return items, usage, nil
}

// modelReply is the answer reviewSchema asks for.
type modelReply struct {
	Items []modelReplyItem `json:"items"`
}

// modelReplyItem is one item of the model's answer, as the model wrote it.
type modelReplyItem struct {
	Section string   `json:"section"`
	Kind    string   `json:"kind"`
	Refs    []string `json:"refs"`
	Rule    string   `json:"rule"`
	Remove  string   `json:"remove"`
	Reason  string   `json:"reason"`
}

// askModel sends the review request and decodes the answer. The usage
// counts the call even when the model reports none, and is returned with
// any error after the call.
func (rv *reviewer) askModel(ctx context.Context, m llm.Model, userContext string, lexicalItems []Item) (*modelReply, llm.Usage, error) {
	resp, err := m.Generate(ctx, rv.reviewRequest(userContext, lexicalItems))
	if err != nil {
		return nil, llm.Usage{}, fmt.Errorf("the model call failed: %w", err)
	}
	usage := resp.Usage
	if usage.Calls == 0 {
		usage.Calls = 1
	}
	raw, err := jsonx.Extract(resp.Text())
	if err != nil {
		return nil, usage, fmt.Errorf("the model's answer is not JSON: %v", err)
	}
	var reply modelReply
	if err := json.Unmarshal(raw, &reply); err != nil {
		return nil, usage, fmt.Errorf("the model's answer does not match the schema: %v", err)
	}
	if reply.Items == nil {
		return nil, usage, errors.New(`the model's answer has no "items" list`)
	}
	return &reply, usage, nil
}

// modelItem checks one item of the model's answer and returns it as a
// report item, with the entries it names. The error says why the item is
// unusable.
func (rv *reviewer) modelItem(r modelReplyItem, byRef map[string]*reviewEntry) (Item, []*reviewEntry, error) {
	kind := Kind(r.Kind)
	section, ok := kindSection[kind]
	if !ok {
		return Item{}, nil, fmt.Errorf("unknown kind %q", r.Kind)
	}
	if want := strings.ReplaceAll(string(section), "-", "_"); r.Section != want {
		return Item{}, nil, fmt.Errorf("kind %q belongs in %s, not %q", r.Kind, want, r.Section)
	}
	if len(r.Refs) == 0 {
		return Item{}, nil, errors.New("it names no entry")
	}
	var es []*reviewEntry
	for _, ref := range r.Refs {
		e, ok := byRef[strings.TrimSpace(ref)]
		if !ok {
			return Item{}, nil, fmt.Errorf("unknown ref %q", ref)
		}
		es = append(es, e)
	}
	reason := mdtext.OneLine(r.Reason)
	if reason == "" {
		reason = "(the model gave no reason)"
	}
	it := Item{Section: section, Kind: kind, Subjects: subjects(es...), Reason: reason}
	var err error
	switch kind {
	case KindToClaudeMD, KindToLocal, KindToTeam:
		it, err = rv.modelPromotion(it, r, es[0])
	case KindDuplicate, KindNearDuplicate, KindOutdated, KindSuperseded:
		err = modelRemoval(&it, r.Remove, es, byRef)
	}
	if err != nil {
		return Item{}, nil, err
	}
	return it, es, nil
}

// modelPromotion completes the promotion it of first, the entry the
// model's item r names first: only an auto memory is promoted, one to team
// memory only when it holds no credential (else it is kept), and one to
// an instruction file only with a one-line rule.
func (rv *reviewer) modelPromotion(it Item, r modelReplyItem, first *reviewEntry) (Item, error) {
	if first.Layer != LayerAuto {
		return Item{}, fmt.Errorf("%s promotes %s, which is not an auto memory", r.Kind, first.Ref)
	}
	if it.Kind == KindToTeam {
		if first.secret != "" {
			return Item{Section: SectionNoAction, Kind: KindKeep, Subjects: subjects(first), Reason: "the model proposed team memory, but it holds what looks like a credential (" + first.secret + "), so it must not be shared"}, nil
		}
		it.Target, it.Applicable = memdir.TeamDirName+"/"+path.Base(first.Path), true
		return it, nil
	}
	rule := mdtext.OneLine(r.Rule)
	if rule == "" || utf8.RuneCountInString(rule) > 500 {
		return Item{}, fmt.Errorf("%s needs a one-line rule of at most 500 characters", r.Kind)
	}
	it.Rule, it.Applicable = rule, true
	it.Target = rv.claudeMDTarget()
	if it.Kind == KindToLocal {
		it.Target = rv.localTarget()
	}
	return it, nil
}

// modelRemoval makes the cleanup item it remove the entry remove names,
// if any: it must be one of the item's entries es, and an auto memory.
func modelRemoval(it *Item, remove string, es []*reviewEntry, byRef map[string]*reviewEntry) error {
	rm := strings.TrimSpace(remove)
	if rm == "" {
		return nil
	}
	e, ok := byRef[rm]
	if !ok || !containsEntry(es, e) {
		return fmt.Errorf("remove %q is not one of its refs", rm)
	}
	if e.Layer != LayerAuto {
		return fmt.Errorf("remove %q is not an auto memory", rm)
	}
	it.Remove, it.Applicable = e.Path, true
	return nil
}

func containsEntry(es []*reviewEntry, e *reviewEntry) bool {
	return slices.Contains(es, e)
}
