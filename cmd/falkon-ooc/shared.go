package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/falkon-ooc/falkon-ooc/chunkstore"
	"github.com/falkon-ooc/falkon-ooc/internal/cliflags"
	"github.com/falkon-ooc/falkon-ooc/internal/fileutil"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// Helpers shared by fit and tune.

// openTraining checks the arguments of fit and tune (--out MODEL and one
// STORE, or Parquet/CSV inputs, ingested into a kept store by
// trainingStore), turns the flags into a config and opens the store, which
// must have targets. check, if not nil, runs on the config before any
// input is read: bad flags fail before an ingest. The caller closes the
// reader.
func (o *fitOpts) openTraining(ctx context.Context, set map[string]bool, args []string, check func(ooc.Config) error, pr *progress) (ooc.Config, *chunkstore.Reader, string, error) {
	if o.Out == "" {
		return ooc.Config{}, nil, "", usagef("--out MODEL is required")
	}
	if len(args) == 0 {
		return ooc.Config{}, nil, "", usagef("no STORE or INPUT given")
	}
	cfg, err := o.Config(set)
	if err != nil {
		return cfg, nil, "", err
	}
	if check != nil {
		if err := check(cfg); err != nil {
			return cfg, nil, "", err
		}
	}
	rawInputs := !(len(args) == 1 && isStore(args[0]))
	if err := o.checkFitOutputs(args, rawInputs); err != nil {
		return cfg, nil, "", err
	}
	var storePath string
	if !rawInputs {
		storePath = args[0]
		for _, f := range append([]string{"target", "features", "exclude", "cache", "weight"}, cliflags.TableFlags...) {
			if set[f] {
				return cfg, nil, "", usagef("--%s applies to Parquet/CSV inputs; %s is a store", f, args[0])
			}
		}
	} else if storePath, err = trainingStore(ctx, &o.input, o.Out, args, o.Workers, pr); err != nil {
		return cfg, nil, "", err
	}
	r, err := chunkstore.Open(storePath)
	if err != nil {
		return cfg, nil, "", err
	}
	if r.NumTargets() == 0 {
		r.Close()
		return cfg, nil, "", fmt.Errorf("store %s has no target column: ingest it with --target COLUMN", storePath)
	}
	return cfg, r, storePath, nil
}

// softMemoryLimit holds the Go-managed memory to the estimate less the
// program text, which RSS counts but the runtime does not manage (≈ 20 MiB
// of the estimate's runtime term): a soft limit, and the user's GOMEMLIMIT
// wins. Without it the collector's headroom lets the peak drift 20–35 %
// above the printed figure (bench/RESULTS.md, "Fit: memory").
func softMemoryLimit(mem ooc.Memory) {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(max(mem.Total-20<<20, mem.Total/2))
	}
}

// passUpdate reports chunk of chunks done in a pass called step, with a
// bar and the time left; *start is the pass's start, reset at its first
// chunk.
func passUpdate(pr *progress, step string, chunk, chunks int, start *time.Time) {
	if chunk <= 1 {
		*start = time.Now()
	}
	frac := float64(chunk) / float64(chunks)
	left := ""
	if chunk > 1 { // one chunk's time says nothing of the pass's
		left = eta(float64(chunk-1), float64(chunks-1), time.Since(*start))
	}
	pr.update(step, fmt.Sprintf("%s %d/%d chunks%s", bar(frac), chunk, chunks, left), false)
}

// saveModel writes the model to out and its JSON summary to out.json.
func saveModel(m *ooc.Model, out string) error {
	if err := m.Save(out); err != nil {
		return err
	}
	if summary, err := m.SummaryJSON(); err == nil {
		if err := writeFileAtomic(out+".json", append(summary, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// writePlotFile writes the PNG that draw makes to path (--plot), never
// half a file.
func writePlotFile(path string, draw func(io.Writer) error) error {
	if err := fileutil.WriteFile(path, 0o644, draw); err != nil {
		return fmt.Errorf("--plot: %w", err)
	}
	return nil
}

// drawPanels writes the plots as one PNG, one above the other, axes
// aligned.
func drawPanels(w io.Writer, panels []*plot.Plot) error {
	const width, rowHeight = 16 * vg.Centimeter, 9 * vg.Centimeter
	img := vgimg.New(width, rowHeight*vg.Length(len(panels)))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadX: vg.Millimeter, PadY: 3 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align(panelsColumn(panels), tiles, dc)
	for i, p := range panels {
		p.Draw(canvases[i][0])
	}
	_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
	return err
}
