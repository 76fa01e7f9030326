//go:build !unix

package cli

import "os"

// terminalColumns is 0 where memdir does not ask the terminal: tables then
// fit COLUMNS, or 80 columns.
func terminalColumns(*os.File) int { return 0 }
