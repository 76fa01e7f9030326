package team

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
)

// EntryChecksum returns an entry's checksum: "sha256:" followed by the hex
// SHA-256 of its UTF-8 content. Claude Code computes the same value, which
// is how a client's delta against the server's entryChecksums works.
func EntryChecksum(content string) string {
	sum := sha256.Sum256([]byte(content))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// RepoChecksum returns the repository checksum (the ETag) for a set of
// entry checksums: the SHA-256 over the lines "key NUL entryChecksum LF" in
// byte order of the keys. It depends only on the entries, so two servers
// holding the same content agree on it, and a PUT that changes nothing
// keeps it. Keys cannot contain NUL ([SanitizeKey]), so the encoding is
// unambiguous.
func RepoChecksum(entryChecksums map[string]string) string {
	keys := make([]string, 0, len(entryChecksums))
	for k := range entryChecksums {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(entryChecksums[k]))
		h.Write([]byte{'\n'})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// parseETag strips the quotes and a weak prefix from an ETag header value.
// Claude Code sends the checksum quoted; tolerating the bare form costs
// nothing.
func parseETag(v string) string {
	v = strings.TrimSpace(v)
	v = strings.TrimPrefix(v, "W/")
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	return v
}

func quoteETag(checksum string) string { return `"` + checksum + `"` }
