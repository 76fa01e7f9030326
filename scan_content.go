package memdir

import (
	"bytes"
	"time"
	"unsafe"

	"github.com/memdir/memdir/internal/mdtext"
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

// HeaderAndBody returns what HeaderOf gives for data, and the body that
// MemoryBody gives for data's first bodyMax bytes, normalising the file's
// text once where it can: the recall index reads both of every file, and
// normalising the head and then the whole copied most files twice.
func HeaderAndBody(rel string, mtime time.Time, data []byte, bodyMax int) (h Header, body string, probs []Problem, ok, exact bool) {
	return headerAndBody(rel, mtime, data, bodyMax, false)
}

// HeaderAndBodyBorrowing is HeaderAndBody without its copy of data: the
// body may share data's bytes, and is valid only while data is unchanged.
// The header's strings are copies. It is for a reader that uses each body
// at once and then reads the next file into the same buffer (a first
// index build, which would otherwise copy every file of the directory).
func HeaderAndBodyBorrowing(rel string, mtime time.Time, data []byte, bodyMax int) (h Header, body string, probs []Problem, ok, exact bool) {
	return headerAndBody(rel, mtime, data, bodyMax, true)
}

func headerAndBody(rel string, mtime time.Time, data []byte, bodyMax int, borrow bool) (h Header, body string, probs []Problem, ok, exact bool) {
	head, exact := scanHeadOf(data)
	if !exact {
		return Header{Path: rel}, "", nil, false, false
	}
	if len(data) > bodyMax || !mdtext.IsNormal(data) {
		// Cut, the body may end inside a character; or normalising
		// moves bytes: the head and the body are each normalised.
		h, probs, ok = scanHead(rel, mtime, int64(len(data)), head)
		if ok {
			body = MemoryBody(data[:min(len(data), bodyMax)])
		}
		return h, body, probs, ok, true
	}
	var text string
	if borrow {
		text = unsafe.String(unsafe.SliceData(data), len(data))
	} else {
		text = string(data)
	}
	h, probs, ok = scanHeadText(rel, mtime, int64(len(data)), head, text[:len(head)], true)
	if ok {
		if _, start, fm := mdtext.SplitFrontmatter(text); fm {
			body = text[start:]
		} else {
			body = text
		}
	}
	return h, body, probs, ok, true
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
