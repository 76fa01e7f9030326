//go:build !unix

package memtool

import "errors"

func mkfifo(string) error { return errors.New("named pipes are a Unix feature") }

func setUmask(int) (restore func()) { return func() {} }
