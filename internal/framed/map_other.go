//go:build !unix

package framed

// mapFile reads the regular file path into 8-byte aligned memory, where
// mapping is not available.
func mapFile(path string) ([]byte, func(), error) {
	f, size, err := openRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := readAligned(f, size)
	if err != nil {
		return nil, nil, err
	}
	return data, func() {}, nil
}
