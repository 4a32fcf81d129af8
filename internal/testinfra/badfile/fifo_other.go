//go:build !unix

package badfile

import "errors"

func mkfifo(string) error { return errors.New("named pipes need a Unix system") }
