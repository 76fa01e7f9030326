//go:build !race

package secrets

// corpusBytes caps how much of the clean corpus TestCleanCorpus reads.
const corpusBytes = 128 << 20
