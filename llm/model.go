package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Model is a language model, as memdir consumes it. Implementations live in
// adapter packages (anthropic, openai); tests use the fake server in memdirtest
// through those real adapters.
//
// Generate returns a *ModelError for failures reported by the provider (HTTP
// status, authentication, unknown model), so callers can tell them apart from
// transport errors and context cancellation.
type Model interface {
	Generate(ctx context.Context, req *Request) (*Response, error)
}

// Role is the author of a message.
type Role string

// Message roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// BlockType discriminates the kinds of content block.
type BlockType string

// Content block kinds.
const (
	BlockText       BlockType = "text"
	BlockToolUse    BlockType = "tool_use"
	BlockToolResult BlockType = "tool_result"
)

// Block is one piece of message content: text, a tool call made by the
// assistant, or the result of a tool call sent back by the user side.
type Block struct {
	Type BlockType `json:"type"`
	// Text is the text of a text block, or the content of a tool result.
	Text string `json:"text,omitempty"`
	// ToolUseID identifies a tool call; a tool result repeats the id it answers.
	ToolUseID string `json:"tool_use_id,omitempty"`
	// ToolName is the name of the tool a tool_use block calls.
	ToolName string `json:"tool_name,omitempty"`
	// Input is the JSON arguments of a tool_use block.
	Input json.RawMessage `json:"input,omitempty"`
	// IsError marks a tool result that reports a failure.
	IsError bool `json:"is_error,omitempty"`
}

// TextBlock returns a text block.
func TextBlock(text string) Block { return Block{Type: BlockText, Text: text} }

// Message is one turn of a conversation sent to a model.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`
}

// Tool describes a tool the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Request is one call to a model.
type Request struct {
	// System is the system prompt. Adapters that support prompt caching mark
	// it (and the tool definitions) as the stable, cacheable prefix.
	System   string
	Messages []Message
	Tools    []Tool
	// Schema, when set, asks for a reply that is a single JSON value matching
	// this JSON schema. Adapters use the provider's structured output where it
	// exists and fall back to extracting JSON from the reply text; either way
	// the JSON arrives as the text of the reply.
	Schema json.RawMessage
	// SchemaName names the schema for providers that want a name.
	SchemaName string
	// MaxTokens caps the reply. Zero means the adapter's default.
	MaxTokens int
}

// StopReason says why the model stopped.
type StopReason string

// Stop reasons, normalised across providers.
const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopOther     StopReason = "other"
)

// Response is a model's reply.
type Response struct {
	Content    []Block
	StopReason StopReason
	Usage      Usage
	// Model is the model name the provider reports having used.
	Model string
}

// Text returns the concatenated text blocks of the reply.
func (r *Response) Text() string {
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == BlockText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// ToolUses returns the tool_use blocks of the reply, in order.
func (r *Response) ToolUses() []Block {
	var out []Block
	for _, c := range r.Content {
		if c.Type == BlockToolUse {
			out = append(out, c)
		}
	}
	return out
}

// Usage counts the tokens of one or more model calls.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// Calls is the number of model calls counted.
	Calls int `json:"calls"`
}

// Add accumulates u2 into u.
func (u *Usage) Add(u2 Usage) {
	u.InputTokens += u2.InputTokens
	u.OutputTokens += u2.OutputTokens
	u.CacheReadTokens += u2.CacheReadTokens
	u.CacheWriteTokens += u2.CacheWriteTokens
	u.Calls += u2.Calls
}

// ModelErrorKind classifies a model provider's failure (ModelError.Kind),
// so that callers can branch on what went wrong whichever provider it was.
// The values are stable strings, as they appear in logs and JSON.
type ModelErrorKind string

// Kinds of model failure. Every adapter (anthropic, openai) reports one of
// them; an overloaded server (HTTP 529 or 503) is ModelServer, and a prompt
// over the context window, which providers report as a 400, is
// ModelBadRequest.
const (
	// ModelAuth: the key is missing or the server refused it (401, 403).
	ModelAuth ModelErrorKind = "auth"
	// ModelNotFound: no such model at this server (404, or a 400 naming an
	// unknown model).
	ModelNotFound ModelErrorKind = "not_found"
	// ModelRateLimit: rate limited (429), still after the adapter's retries.
	ModelRateLimit ModelErrorKind = "rate_limit"
	// ModelServer: the server failed or is overloaded (5xx), still after
	// the retries.
	ModelServer ModelErrorKind = "server"
	// ModelBadRequest: the server rejected the request (another 4xx).
	ModelBadRequest ModelErrorKind = "bad_request"
	// ModelBadResponse: the reply could not be read or used (malformed,
	// cut short at the token limit, an unexpected status).
	ModelBadResponse ModelErrorKind = "bad_response"
	// ModelTimeout: an attempt ran past the adapter's timeout.
	ModelTimeout ModelErrorKind = "timeout"
	// ModelUnreachable: no connection, such as a local server that is not
	// running.
	ModelUnreachable ModelErrorKind = "unreachable"
)

// ModelError is a failure reported by a model provider. Callers reach it
// with errors.As and switch on Kind.
type ModelError struct {
	Provider   string // "anthropic", "openai"
	Model      string
	StatusCode int // HTTP status, 0 when not known
	// Kind classifies the failure.
	Kind    ModelErrorKind
	Message string
	Err     error
}

func (e *ModelError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", e.Provider)
	if e.Model != "" {
		fmt.Fprintf(&b, " model %q", e.Model)
	}
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.StatusCode)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	return b.String()
}

func (e *ModelError) Unwrap() error { return e.Err }
