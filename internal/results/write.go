package results

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// Writer appends rows to a CSV file, each one flushed and synced before Write returns. It holds
// an exclusive lock on the file until Close (the kernel drops it when the process dies), so that
// no second iotbench appends to a file a run is still writing.
type Writer struct {
	f *os.File
	w *csv.Writer
}

// Create makes a new CSV file with its header. It refuses to overwrite an existing file. The
// folder is synced too, so that the file's name survives a crash as its rows do.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	w, err := open(f, 0)
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// maxSameSecond bounds the names tried for runs started in one second.
const maxSameSecond = 99

// CreateIn makes a new results file in dir (made if need be), named for t in UTC to the second:
// 20260102T150405Z.csv. Names sort in the order the runs started: a run started in the same
// second as another gets the next free name (…Z_02.csv, …Z_03.csv), never the other's file.
func CreateIn(dir string, t time.Time) (*Writer, error) {
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		if err := syncDir(filepath.Dir(filepath.Clean(dir))); err != nil {
			return nil, err
		}
	}
	base := t.UTC().Format("20060102T150405Z")
	for n := 1; n <= maxSameSecond; n++ {
		name := base + ".csv"
		if n > 1 {
			name = fmt.Sprintf("%s_%02d.csv", base, n)
		}
		w, err := Create(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return w, err
	}
	return nil, fmt.Errorf("%s: %d results files were already started at %s: write to another folder", dir, maxSameSecond, base)
}

// Append opens a results file to add rows to, as a resumed run does, and returns the rows it
// holds. A last row cut off mid-way is removed from the file first (the cell it began was never
// recorded whole), and a warning names its line. The file must be in the layout this iotbench
// writes (its header and schema version): one file holds rows of one schema. A file another
// iotbench is still writing is refused.
func Append(path string) (w *Writer, rows []Row, warnings []string, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if err := lock(f); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: another iotbench is writing this file: wait for it to finish (%v)", path, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	p, err := parse(data)
	if err != nil {
		return nil, nil, nil, located(path, err)
	}
	if err := p.sameLayout(); err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %v", path, err)
	}
	end := int64(len(data))
	if p.cut != nil {
		end = p.cut.Offset
		warnings = append(warnings, cutWarning(path, p.cut, len(p.rows), "removed before rows are appended"))
	}
	w, err = open(f, end)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return w, p.rows, warnings, nil
}

// sameLayout refuses a file whose rows this iotbench would write in another layout.
func (p *parsed) sameLayout() error {
	if p.header == nil || slices.Equal(p.header, Header()) && (p.version == 0 || p.version == SchemaVersion) {
		return nil
	}
	v := p.version
	if v == 0 {
		v = 1
		for _, c := range columns {
			if slices.Contains(p.header, c.name) {
				v = max(v, c.since)
			}
		}
	}
	by := ""
	if len(p.rows) > 0 && p.rows[0].Version != "" {
		by = " (" + p.rows[0].Version + ")"
	}
	if v != SchemaVersion {
		return fmt.Errorf("written in schema %d, but this iotbench writes schema %d: one file holds rows of one schema; finish it with the iotbench that wrote it%s, or start a new run", v, SchemaVersion, by)
	}
	return fmt.Errorf("its header is not the one this iotbench writes (the same columns in the same order): rows appended would land in the wrong columns; start a new run")
}

// open makes a Writer of f, locked, from end on: the file is cut to end, and a header is written
// when end is 0.
func open(f *os.File, end int64) (*Writer, error) {
	if err := lock(f); err != nil {
		return nil, err
	}
	if err := f.Truncate(end); err != nil {
		return nil, err
	}
	if _, err := f.Seek(end, io.SeekStart); err != nil {
		return nil, err
	}
	w := &Writer{f: f, w: csv.NewWriter(f)}
	if end == 0 {
		return w, w.write(Header())
	}
	return w, f.Sync()
}

// lock takes the file's exclusive lock without waiting. It fails only when another process holds
// it: on a file system without locks the file is written unlocked, as before locks were taken.
func lock(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return err
	}
	return nil
}

// syncDir makes a folder's entries (a new file's name) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Path is the file written.
func (w *Writer) Path() string { return w.f.Name() }

// Write appends one row and makes it durable.
func (w *Writer) Write(r Row) error { return w.write(record(r)) }

// record is r's CSV fields in column order.
func record(r Row) []string {
	rec := make([]string, len(columns))
	for i, c := range columns {
		rec[i] = c.get(&r)
	}
	return rec
}

func (w *Writer) write(rec []string) error {
	if err := w.w.Write(rec); err != nil {
		return err
	}
	w.w.Flush()
	if err := w.w.Error(); err != nil {
		return err
	}
	return w.f.Sync()
}

// Rewrite changes rows the file holds: it reads them back, lets change alter them in place, and
// puts a new file in the old one's place, written whole and synced before it is renamed over it,
// so that a crash leaves the old rows or the new, never some of either. The new file is locked
// and appended to from then on.
func (w *Writer) Rewrite(change func(rows []Row)) error {
	path := w.f.Name()
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	p, err := parse(data)
	if err != nil {
		return located(path, err)
	}
	change(p.rows)
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	nw, err := open(f, 0)
	if err == nil {
		err = f.Chmod(0o644)
	}
	for i := 0; err == nil && i < len(p.rows); i++ {
		err = nw.Write(p.rows[i])
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return fmt.Errorf("%s: rewriting its rows: %w", path, err)
	}
	w.f.Close()
	w.f, w.w = nw.f, nw.w
	return syncDir(filepath.Dir(path))
}

// Close closes the file and releases its lock.
func (w *Writer) Close() error { return w.f.Close() }
