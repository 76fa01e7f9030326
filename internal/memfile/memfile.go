// Package memfile holds the small file helpers that the root package and
// the services built on it (promote, session) share: reading a memory file
// through an os.Root with memdir's limits, naming content the way the
// journal does, and writing a size for people.
package memfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/memdir/memdir/internal/errs"
	"github.com/memdir/memdir/internal/safeopen"
)

// ReadRooted reads a file inside root, refusing non-regular files and
// files over max bytes. A missing file returns fs.ErrNotExist.
func ReadRooted(root *os.Root, rel string, max int64) ([]byte, fs.FileInfo, error) {
	f, fi, err := safeopen.OpenIn(root, rel)
	if errors.Is(err, safeopen.ErrNotRegular) {
		return nil, nil, fmt.Errorf("%s is not a regular file: %w", rel, errs.ErrInvalid)
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, fi, fmt.Errorf("%s is %s, over the %s limit for a memory file: split it into smaller memories", rel, FormatSize(int(fi.Size())), FormatSize(int(max)))
	}
	// Sized from the stat, so a large index is read without regrowing.
	var buf bytes.Buffer
	buf.Grow(int(min(fi.Size(), max)) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, fi, err
	}
	return buf.Bytes(), fi, nil
}

// ContentSum names content as the journal stores it: "sha256:" and the
// hex digest.
func ContentSum(data []byte) string {
	s := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(s[:])
}

// HashFile is the ContentSum of the file at path, "" when it is missing.
func HashFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return ContentSum(data), nil
}

// FormatSize formats a size the way Claude Code's formatFileSize does:
// "N bytes" under 1 KiB, else one decimal of KB, MB or GB with a trailing
// ".0" dropped (25000 → "24.4KB"). Rounding is half-up, like JavaScript's
// toFixed.
func FormatSize(n int) string {
	if n < 1024 {
		return fmt.Sprintf("%d bytes", n)
	}
	units := []string{"KB", "MB", "GB"}
	div := int64(1024)
	for i, u := range units {
		if int64(n) < div*1024 || i == len(units)-1 {
			tenths := (int64(n)*10 + div/2) / div
			s := fmt.Sprintf("%d.%d", tenths/10, tenths%10)
			return strings.TrimSuffix(s, ".0") + u
		}
		div *= 1024
	}
	panic("unreachable")
}
