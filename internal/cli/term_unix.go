//go:build unix

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminalColumns is the width of the terminal f is, 0 when it is none or
// does not say.
func terminalColumns(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
