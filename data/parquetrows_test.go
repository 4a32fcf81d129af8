package data_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/raytpu/raytpu/data"
	"github.com/raytpu/raytpu/field"
)

type idRow struct {
	ID int64 `parquet:"id"`
}

// writeRows writes a Parquet file of n rows, ids from first, in row groups
// of at most group rows (so that the footer holds several).
func writeRows(t *testing.T, path string, first, n, group int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[idRow](f)
	for i := 0; i < n; i += group {
		rows := make([]idRow, 0, group)
		for j := i; j < min(i+group, n); j++ {
			rows = append(rows, idRow{ID: int64(first + j)})
		}
		if _, err := w.Write(rows); err != nil {
			t.Fatal(err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestParquetRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRows(t, filepath.Join(dir, "a.parquet"), 0, 1000, 300)
	writeRows(t, filepath.Join(dir, "b.parquet"), 1000, 250, 1000)
	writeRows(t, filepath.Join(dir, "part=x", "c.parquet"), 1250, 7, 7)
	// What read_parquet skips: hidden and underscore names, other extensions.
	writeRows(t, filepath.Join(dir, "_tmp", "d.parquet"), 0, 11, 11)
	writeRows(t, filepath.Join(dir, ".e.parquet"), 0, 13, 13)
	for name, body := range map[string]string{"_SUCCESS": "", "notes.txt": "not parquet"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notParquet := filepath.Join(t.TempDir(), "x.parquet")
	if err := os.WriteFile(notParquet, []byte("PAR1 but no footer"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		paths   []string
		want    int
		unknown bool
		fails   bool
	}{
		{"directory", []string{dir}, 1257, false, false},
		{"one file", []string{filepath.Join(dir, "a.parquet")}, 1000, false, false},
		{"files and a directory", []string{filepath.Join(dir, "b.parquet"), filepath.Join(dir, "part=x")}, 257, false, false},
		{"remote", []string{dir, "gs://bucket/data"}, 0, true, false},
		{"missing here", []string{filepath.Join(dir, "nope")}, 0, true, false},
		{"not parquet", []string{notParquet}, 0, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := data.ParquetRows(c.paths...)
			switch {
			case c.unknown:
				if !errors.Is(err, data.ErrRowsUnknown) {
					t.Fatalf("ParquetRows(%v) = %d, %v; want ErrRowsUnknown", c.paths, got, err)
				}
			case c.fails:
				if err == nil || errors.Is(err, data.ErrRowsUnknown) {
					t.Fatalf("ParquetRows(%v) = %d, %v; want an error that the file is not Parquet", c.paths, got, err)
				}
			case err != nil || got != c.want:
				t.Fatalf("ParquetRows(%v) = %d, %v; want %d", c.paths, got, err, c.want)
			}
		})
	}
}

// A read_parquet source over local files gives Predict the footer's row
// count; over a remote path the count stays unknown.
func TestPredictReadsParquetFooters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 3 {
		writeRows(t, filepath.Join(dir, "part-"+string(rune('0'+i))+".parquet"), i*350, 350, 100)
	}
	it := data.IterJaxBatches{BatchSize: 64, Ragged: data.Pad{Value: -1}}
	hosts := data.Hosts{Workers: 2, Accelerator: "v4"}
	p := field.NewPath("iter")

	pr, err := data.Predict(p, data.From(data.ReadParquet{Paths: []string{dir}, Columns: []string{"id"}}), it, hosts)
	if err != nil {
		t.Fatal(err)
	}
	// 1050 rows over 2 hosts: 525 each = 8 full batches of 64 and 13 rows
	// padded with 51.
	if pr.Rows != 1050 || len(pr.Groups) != 1 || pr.Groups[0].Batches.Batches != 9 || pr.PadRows != 2*51 {
		t.Errorf("prediction %+v, want 1050 rows, 9 batches per host, 102 padding rows", pr)
	}
	if n, ok := data.From(data.ReadParquet{Paths: []string{dir}}).KnownRows(); !ok || n != 1050 {
		t.Errorf("KnownRows = %d, %v; want 1050, true", n, ok)
	}

	pr, err = data.Predict(p, data.From(data.ReadParquet{Paths: []string{"gs://bucket/train"}}), it, hosts)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Rows != -1 || len(pr.Groups) != 0 {
		t.Errorf("remote source: prediction %+v, want rows unknown and no groups", pr)
	}
}

// A directory with no file read_parquet reads is an error (Ray's
// read_parquet fails on it), never 0 rows.
func TestParquetRowsEmptyDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeRows(t, filepath.Join(dir, "_tmp", "d.parquet"), 0, 11, 11)
	n, err := data.ParquetRows(dir)
	if err == nil || errors.Is(err, data.ErrRowsUnknown) {
		t.Fatalf("ParquetRows(empty dir) = %d, %v; want an error that is not ErrRowsUnknown", n, err)
	}
}
