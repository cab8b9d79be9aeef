package beam

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"testing"

	sdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
)

// testDir holds files shared by the tests of one run.
var testDir string

func TestMain(m *testing.M) {
	flag.Parse()
	sdk.Init()
	if !testing.Verbose() {
		// Prism logs every job at level info.
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	}
	var err error
	if testDir, err = os.MkdirTemp("", "falkon-beam-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(testDir)
	os.Exit(code)
}
