package leasejudge

import (
	"bytes"
	"go/format"
	"os"
	"path/filepath"
	"testing"
)

// Every Go file of the package is gofmt'ed (go/format is gofmt's own printer).
func TestGofmt(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		formatted, err := format.Source(src)
		if err != nil {
			t.Errorf("%s: %v", f, err)
		} else if !bytes.Equal(src, formatted) {
			t.Errorf("%s is not gofmt'ed", f)
		}
	}
}
