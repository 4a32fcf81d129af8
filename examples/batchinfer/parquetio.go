package main

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

// inputRow is one row of the input files: the key and the model's input.
type inputRow struct {
	ID int64   `parquet:"id"`
	X  float64 `parquet:"x"`
}

// outputRow is one row Ray's write_parquet wrote: the input columns and
// the model's.
type outputRow struct {
	ID       int64   `parquet:"id"`
	X        float64 `parquet:"x"`
	Y        float32 `parquet:"y"`
	ActorPID int64   `parquet:"actor_pid"`
}

// writeInput writes rows rows (id 0..rows-1, x = id) into files Parquet
// files under dir, as even as the division allows, in row groups of at
// most 1,000 rows.
func writeInput(dir string, rows, files int) error {
	if rows < 1 || files < 1 || files > rows {
		return fmt.Errorf("--rows %d over --files %d: want at least one row per file", rows, files)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	next := 0
	for i := range files {
		n := rows / files
		if i < rows%files {
			n++
		}
		if err := writeFile(filepath.Join(dir, fmt.Sprintf("part-%03d.parquet", i)), next, n); err != nil {
			return err
		}
		next += n
	}
	return nil
}

func writeFile(path string, first, n int) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	w := parquet.NewGenericWriter[inputRow](f)
	const group = 1000
	buf := make([]inputRow, 0, group)
	for id := first; id < first+n; id++ {
		buf = append(buf, inputRow{ID: int64(id), X: float64(id)})
		if len(buf) == group || id == first+n-1 {
			if _, err := w.Write(buf); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if err := w.Flush(); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			buf = buf[:0]
		}
	}
	return w.Close()
}

// readOutput reads every Parquet file under dir.
func readOutput(dir string) ([]outputRow, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var out []outputRow
	for _, p := range paths {
		rows, err := parquet.ReadFile[outputRow](p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, rows...)
	}
	return out, nil
}

// OutputError is written output that does not hold every input row exactly
// once with the model's prediction: rows lost, written twice (a retried
// call whose first output was also kept) or predicted wrong.
type OutputError struct {
	// Rows is the number of input rows; Written the rows read back.
	Rows, Written int
	// Missing, Duplicated and Wrong count the input ids never written,
	// written more than once, and written with a wrong y; Unknown counts
	// written ids that are not input ids. Examples holds a few ids of each.
	Missing, Duplicated, Wrong, Unknown int
	Examples                            map[string][]int64
}

// ErrOutput matches every *OutputError with errors.Is.
var ErrOutput = errors.New("batch inference output is not exactly once")

func (e *OutputError) Error() string {
	return fmt.Sprintf("%d input rows, %d written: %d missing, %d duplicated, %d wrong, %d unknown (examples %v)",
		e.Rows, e.Written, e.Missing, e.Duplicated, e.Wrong, e.Unknown, e.Examples)
}

// Is reports ErrOutput.
func (e *OutputError) Is(target error) bool { return target == ErrOutput }

// verify checks that rows hold every id 0..n-1 exactly once with y = w*x+b.
// It returns the rows written by each actor process.
func verify(rows []outputRow, n int, w, b float32) (map[int64]int, error) {
	seen := make([]int, n)
	e := &OutputError{Rows: n, Written: len(rows), Examples: map[string][]int64{}}
	example := func(kind string, id int64) {
		if len(e.Examples[kind]) < 5 {
			e.Examples[kind] = append(e.Examples[kind], id)
		}
	}
	perActor := map[int64]int{}
	for _, r := range rows {
		perActor[r.ActorPID]++
		if r.ID < 0 || r.ID >= int64(n) {
			e.Unknown++
			example("unknown", r.ID)
			continue
		}
		seen[r.ID]++
		if seen[r.ID] == 2 {
			e.Duplicated++
			example("duplicated", r.ID)
		}
		if want := w*float32(r.ID) + b; r.Y != want || r.X != float64(r.ID) {
			e.Wrong++
			example("wrong", r.ID)
		}
	}
	for id, c := range seen {
		if c == 0 {
			e.Missing++
			example("missing", int64(id))
		}
	}
	if e.Missing+e.Duplicated+e.Wrong+e.Unknown > 0 {
		return perActor, e
	}
	return perActor, nil
}
