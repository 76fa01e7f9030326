package framed

import (
	"hash/crc32"
	"sync"
)

// castagnoli is built on first use, not at start-up: hash/crc32's first
// table for the Castagnoli polynomial also builds the tables of its
// hardware path, 0.2-0.3 ms on the development machine, which a process
// that never reads or writes a frame (memdir-checkpoint --version) need not
// pay. One that does pays it once. A slicing-by-8 table built in
// microseconds was tried for small inputs and measured no better: at 0.6-1
// GB/s it spent as much on the state file's 128 KB read and written as the
// tables cost, and lost to the hardware path wherever the tables were built
// anyway (in the hook, which checks the recall index first).
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// checksum returns the CRC-32C of b continued from crc (0 to start).
func checksum(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli(), b) }
