package tabular_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/tabular"
)

// TestMaxLine: a text record longer than Options.MaxLine is a
// *LineTooLongError naming the file and the line the record starts on,
// whether it is the header, a data line or a quoted field spanning lines;
// records up to the limit read as before.
func TestMaxLine(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("9", 100)
	for _, c := range []struct {
		name, text string
		line       int64 // 0: reads
	}{
		{"ok.csv", "a,b\n1," + long[:60] + "\n2,3\n", 0},
		{"header.csv", "a," + long + "\n1,2\n", 1},
		{"row.csv", "a,b\n1,2\n3," + long + "\n4,5\n", 3},
		{"quoted.csv", "a,b\n1,2\n3,\"" + long[:40] + "\n" + long[:40] + "\"\n", 3},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := tabular.Open([]string{path}, tabular.Options{Numeric: []string{"a"}, MaxLine: 64})
		if err == nil {
			for r.Next(context.Background()) {
			}
			err = r.Err()
			r.Close()
		}
		var le *tabular.LineTooLongError
		switch {
		case c.line == 0 && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.line == 0:
		case !errors.As(err, &le) || le.Line != c.line || le.File != path:
			t.Errorf("%s: got %v, want a *LineTooLongError at line %d", c.name, err, c.line)
		case err.Error() != fmt.Sprintf("%s: line %d is longer than 64 bytes (--max-line); a text file this wide is more likely damaged or not a CSV file, else raise --max-line", path, c.line):
			t.Errorf("%s: message %q", c.name, err)
		}
	}
}
