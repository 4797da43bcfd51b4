package timeline

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

var errNoSpace = errors.New("no space left on device")

// fillingFile is a file on a disk with room bytes left: a write past them is cut short.
type fillingFile struct {
	*os.File
	room int
}

func (f *fillingFile) Write(p []byte) (int, error) {
	if len(p) > f.room {
		n, _ := f.File.Write(p[:f.room])
		f.room -= n
		return n, errNoSpace
	}
	f.room -= len(p)
	return f.File.Write(p)
}

func (f *fillingFile) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

// TestWriteFileIsWholeOrAbsent: a histogram file that fails mid-write leaves neither its part
// nor an older file of the same cell (a resumed run's) for report to take as the cell's.
func TestWriteFileIsWholeOrAbsent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s_t_t1.hlog")
	whole := func(w io.Writer) error { _, err := io.WriteString(w, "an older attempt's log\n"); return err }
	if err := writeFile(path, whole); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "an older attempt's log\n" {
		t.Fatalf("written %q, %v", b, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 as os.Create gives", st.Mode().Perm())
	}

	torn := func(w io.Writer) error {
		ff := &fillingFile{File: w.(*os.File), room: 10}
		_, err := io.WriteString(ff, "#iotbench s · t · trial 1: a header longer than the room left\n")
		return err
	}
	if err := writeFile(path, torn); !errors.Is(err, errNoSpace) {
		t.Fatalf("error %v, want the disk's", err)
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("%s left after a failed write", e.Name())
	}
}

// TestWriteHistogramsFailingLeavesNoHistogram: when the second file of a cell cannot be written,
// the first goes too, so a cell's histograms are there together or not at all.
func TestWriteHistogramsFailingLeavesNoHistogram(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "s_t_t1")
	h := hdrhistogram.New(1, 60e6, 3)
	_ = h.RecordValue(1500)
	if err := os.Mkdir(base+".hgrm", 0o755); err != nil { // a .hgrm that cannot be replaced
		t.Fatal(err)
	}
	err := WriteHistograms(base, sampleCell(), time.Unix(1e9, 0), time.Second, h)
	if err == nil {
		t.Fatal("no error writing over a folder")
	}
	if _, err := os.Stat(base + ".hlog"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the .hlog is left (%v) beside a .hgrm that failed", err)
	}
}
