package memdir

import (
	"bytes"
	"time"
)

// HeaderOf returns the header a scan reads from a file whose whole content
// is data, for a reader that reads the whole file anyway (the recall index,
// which hashes it) and need not open it a second time for its header. A
// scan reads the first FrontmatterMaxLines lines, reading at most about
// 64 KiB to find them; exact is false when data does not say what that
// read would have held (those lines run past 64 KiB), and the header must
// then be read through a [HeaderReader].
func HeaderOf(rel string, mtime time.Time, data []byte) (h Header, probs []Problem, ok, exact bool) {
	head, exact := scanHeadOf(data)
	if !exact {
		return Header{Path: rel}, nil, false, false
	}
	h, probs, ok = scanHead(rel, mtime, int64(len(data)), head)
	return h, probs, ok, true
}

// scanHeadOf returns what readLines returns for a file of content data:
// its first FrontmatterMaxLines lines, or all of it when it has fewer.
func scanHeadOf(data []byte) ([]byte, bool) {
	end, lines := 0, 0
	for lines < FrontmatterMaxLines {
		i := bytes.IndexByte(data[end:], '\n')
		if i < 0 {
			break
		}
		end += i + 1
		lines++
	}
	switch {
	case lines == FrontmatterMaxLines && end <= scanReadMax:
		return data[:end], true
	case len(data) <= scanReadMax:
		return data, true
	}
	return nil, false
}
