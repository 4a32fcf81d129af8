package fieldfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is the error (inside an *fs.PathError) of a path that is
// not a regular file: a directory, a named pipe, a socket or a device.
// raytpu refuses it before opening it for reading, since a named pipe
// with no writer blocks its reader forever.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is the error (inside an *fs.PathError) of a file larger
// than MaxFileSize, refused before it is read.
var ErrTooLarge = fmt.Errorf("larger than %d bytes, the most raytpu reads from a file", MaxFileSize)

// ReadFile reads the file a user names, for Decode: a path that is not a
// regular file is refused before it is opened for reading, a file larger
// than MaxFileSize before it is read (and one that grows while it is read
// is cut after MaxFileSize+1 bytes, which Decode refuses). Its errors are
// *fs.PathError values naming the path; errors.Is finds ErrNotRegular and
// ErrTooLarge in them.
func ReadFile(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkRegular(path, fi); err != nil {
		return nil, err
	}
	// O_NONBLOCK: should a named pipe replace the file after the check,
	// opening it does not wait for a writer; the check below refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkRegular(path, fi); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(f, MaxFileSize+1))
}

func checkRegular(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%s): give the path of a file", ErrNotRegular, modeName(fi.Mode()))}
	}
	if fi.Size() > MaxFileSize {
		return &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: it has %d", ErrTooLarge, fi.Size())}
	}
	return nil
}

func modeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return m.Type().String()
}
