// Package sanitize turns a project path into the directory name Claude Code
// gives it under ~/.claude/projects/, hash suffix included. Package locate
// exports it as SanitizePath; the store and the state paths use it from here.
package sanitize

import (
	"math/bits"
	"strconv"
	"unicode/utf16"
)

// maxSanitizedLength is the longest sanitised name Claude Code keeps whole,
// counted in UTF-16 code units.
const maxSanitizedLength = 200

// Runtime selects how names longer than 200 UTF-16 units are hashed. The
// hash depends on the JavaScript runtime that ran Claude Code.
type Runtime int

const (
	// Bun reproduces the shipped Claude Code CLI, which runs on Bun:
	// Bun.hash, 64-bit wyhash with seed 0 over the UTF-8 bytes, in base 36.
	Bun Runtime = iota
	// Node reproduces Claude Code run under Node.js: a signed 32-bit djb2
	// over UTF-16 units, absolute value, in base 36.
	Node
)

func (r Runtime) String() string {
	if r == Node {
		return "node"
	}
	return "bun"
}

// Path turns a path into a directory name exactly as Claude Code does:
// every UTF-16 code unit that is not an ASCII letter or digit becomes '-' (so a
// character outside the Basic Multilingual Plane becomes "--"). A result longer
// than 200 units is cut to 200 and followed by '-' and a hash of the original,
// unsanitised name.
func Path(name string, runtime Runtime) string {
	units := utf16.Encode([]rune(name))
	out := make([]byte, len(units))
	for i, u := range units {
		if u < 0x80 && isASCIIAlnum(byte(u)) {
			out[i] = byte(u)
		} else {
			out[i] = '-'
		}
	}
	if len(out) <= maxSanitizedLength {
		return string(out)
	}
	var h string
	if runtime == Node {
		h = djb2Base36(units)
	} else {
		h = strconv.FormatUint(wyhash([]byte(name), 0), 36)
	}
	return string(out[:maxSanitizedLength]) + "-" + h
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// djb2Base36 is Math.abs(h).toString(36) where h is djb2 over UTF-16 units in
// signed 32-bit arithmetic.
func djb2Base36(units []uint16) string {
	var h int32
	for _, u := range units {
		h = (h << 5) - h + int32(u)
	}
	// Math.abs of the most negative int32 is 2^31, which int64 holds.
	v := int64(h)
	if v < 0 {
		v = -v
	}
	return strconv.FormatInt(v, 36)
}

// wyhash is the final version of wyhash as implemented by Zig's std.hash.Wyhash,
// which Bun.hash uses.
var wySecret = [4]uint64{0xa0761d6478bd642f, 0xe7037ed1a0b428db, 0x8ebc6af09c88c6e3, 0x589965cc75374cc3}

func wyMum(a, b uint64) (uint64, uint64) {
	hi, lo := bits.Mul64(a, b)
	return lo, hi
}

func wyMix(a, b uint64) uint64 {
	lo, hi := wyMum(a, b)
	return lo ^ hi
}

func wyRead8(p []byte) uint64 {
	return uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 |
		uint64(p[4])<<32 | uint64(p[5])<<40 | uint64(p[6])<<48 | uint64(p[7])<<56
}

func wyRead4(p []byte) uint64 {
	return uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24
}

func wyhash(input []byte, seed uint64) uint64 {
	var state [3]uint64
	state[0] = seed ^ wyMix(seed^wySecret[0], wySecret[1])
	state[1], state[2] = state[0], state[0]
	var a, b uint64
	n := len(input)
	if n <= 16 {
		switch {
		case n >= 4:
			end := n - 4
			quarter := (n >> 3) << 2
			a = wyRead4(input)<<32 | wyRead4(input[quarter:])
			b = wyRead4(input[end:])<<32 | wyRead4(input[end-quarter:])
		case n > 0:
			a = uint64(input[0])<<16 | uint64(input[n>>1])<<8 | uint64(input[n-1])
		}
	} else {
		i := 0
		if n >= 48 {
			for ; i+48 < n; i += 48 {
				for j := range 3 {
					x := wyRead8(input[i+16*j:])
					y := wyRead8(input[i+16*j+8:])
					state[j] = wyMix(x^wySecret[j+1], y^state[j])
				}
			}
			state[0] ^= state[1] ^ state[2]
		}
		rest := input[i:]
		for k := 0; k+16 < len(rest); k += 16 {
			state[0] = wyMix(wyRead8(rest[k:])^wySecret[1], wyRead8(rest[k+8:])^state[0])
		}
		a = wyRead8(input[n-16:])
		b = wyRead8(input[n-8:])
	}
	a ^= wySecret[1]
	b ^= state[0]
	a, b = wyMum(a, b)
	return wyMix(a^wySecret[0]^uint64(n), b^wySecret[1])
}
