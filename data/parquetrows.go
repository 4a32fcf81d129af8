package data

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// ErrRowsUnknown means ParquetRows cannot count a path's rows from this
// machine: a remote URI (gs://, s3://) or a local path that does not exist
// here (it may exist on the cluster's nodes).
var ErrRowsUnknown = errors.New("row count unknown before running")

// ParquetRows returns the rows ray.data.read_parquet(paths) yields, read
// from the files' footers (no data pages are read). A directory counts
// every file below it that read_parquet reads: names ending in .parquet,
// skipping any path component that starts with "." or "_" (Ray's
// exclude_prefixes), as _SUCCESS and .crc files are.
//
// It returns an error wrapping ErrRowsUnknown for a remote path or a local
// path missing here, and any other error for a file that is not Parquet or
// a directory that holds no Parquet file (read_parquet fails on both), or
// no path at all.
func ParquetRows(paths ...string) (int, error) {
	if len(paths) == 0 {
		return 0, errors.New("data: ParquetRows: no path; pass the files or directories read_parquet reads")
	}
	files, err := parquetFiles(paths)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, f := range files {
		n, err := footerRows(f)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// parquetFiles expands paths as read_parquet does, in a stable order.
func parquetFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if strings.Contains(p, "://") {
			return nil, fmt.Errorf("%s: a remote path: %w", p, ErrRowsUnknown)
		}
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: not on this machine: %w", p, ErrRowsUnknown)
		}
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path != p && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() && strings.EqualFold(filepath.Ext(d.Name()), ".parquet") {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: a directory with no Parquet file read_parquet reads (names ending in .parquet, none under a name starting with . or _); Ray's read_parquet fails on it", p)
		}
		slices.Sort(found)
		out = append(out, found...)
	}
	return out, nil
}

// footerRows reads the row count of one file's footer.
func footerRows(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return 0, fmt.Errorf("%s: not a Parquet file: %w", path, err)
	}
	return int(pf.NumRows()), nil
}
