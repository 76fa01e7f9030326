// Package llm is the vocabulary memdir speaks to language and embedding
// models in: a [Model] answers a [Request] of [Message]s made of [Block]s
// (text, tool calls and their results) with a [Response]; an [Embedder]
// turns texts into vectors. Every call reports its token [Usage], and a
// provider's failure comes back as a [ModelError] whose Kind says what
// went wrong, whichever provider it was.
//
// The package holds no implementation: the adapters (packages anthropic
// and openai) implement Model and Embedder on the providers' SDKs, and
// everything that runs a model (recall's selector, the extraction and
// consolidation agents, session memory, the promotion review) depends on
// this package alone, so a host links the SDK of the provider it uses and
// nothing else. It imports nothing of memdir.
package llm
