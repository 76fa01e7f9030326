//go:build race

package secrets

// corpusBytes is smaller under the race detector, which slows scanning
// about tenfold.
const corpusBytes = 6 << 20
