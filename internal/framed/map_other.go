//go:build !unix

package framed

import "os"

// mapFile reads the regular file path into 8-byte aligned memory, where
// mapping is not available.
func mapFile(path string) ([]byte, *os.File, func(), error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	data, err := readAligned(f, size)
	if err != nil {
		return nil, nil, nil, err
	}
	return data, nil, func() {}, nil
}
