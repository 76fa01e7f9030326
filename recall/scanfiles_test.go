package recall

import (
	"hash/crc32"
	"math"
	"testing"
)

// TestScanFilesSumsAndChecksTheTable holds scanFiles, which sums the file
// table a block at a time while checking it, to the whole table's
// checksum, and to refusing each kind of record the checksum cannot vouch
// for, wherever in the table (first block, a later one, the last record).
func TestScanFilesSumsAndChecksTheTable(t *testing.T) {
	const blobLen = 5000
	table := func() []diskFile {
		files := make([]diskFile, 1300) // more than two blocks
		for i := range files {
			files[i] = diskFile{PathOff: uint32(i), PathLen: 10, NameOff: uint32(2 * i), NameLen: 5, DescOff: uint32(3 * i), DescLen: 7, Type: uint32(i % len(recallTypes))}
			if i%7 == 0 {
				files[i].Flags = flagBad
			}
			files[i].Hash[0], files[i].Hash[1] = byte(i), byte(i>>8)
			files[i].Stamp.MTime = int64(i) * 1e9
		}
		return files
	}
	files := table()
	mtimes := make([]int64, len(files))
	crc, good, ok := scanFiles(files, blobLen, mtimes)
	if !ok || crc != crc32.Update(0, recallCRC(), rawBytes(files)) {
		t.Fatalf("scanFiles = %#x, %v; the table's checksum is %#x", crc, ok, crc32.Update(0, recallCRC(), rawBytes(files)))
	}
	if want := 1300 - (1300+6)/7; good != want {
		t.Errorf("%d searchable files, want %d", good, want)
	}
	for i, got := range mtimes {
		want := files[i].Stamp.MTime
		if files[i].Flags&flagBad != 0 {
			want = math.MinInt64 // not counted by the day factor
		}
		if got != want {
			t.Fatalf("mtimes[%d] = %d, want %d", i, got, want)
		}
	}
	for name, spoil := range map[string]func(*diskFile){
		"path past the blob":        func(d *diskFile) { d.PathOff = blobLen - 3 },
		"name past the blob":        func(d *diskFile) { d.NameOff, d.NameLen = 1, blobLen },
		"description past the blob": func(d *diskFile) { d.DescOff, d.DescLen = 1<<32-1, 2 },
		"unknown type":              func(d *diskFile) { d.Type = uint32(len(recallTypes)) },
	} {
		for _, at := range []int{0, 600, 1299} {
			files := table()
			spoil(&files[at])
			if _, _, ok := scanFiles(files, blobLen, nil); ok {
				t.Errorf("%s at record %d: accepted", name, at)
			}
		}
	}
}
