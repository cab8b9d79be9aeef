package main

import (
	"fmt"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// writePlot draws the CG residual (log scale) and, when there is one, the
// validation metric by iteration, one panel each, as a PNG.
func writePlot(w io.Writer, tr ooc.Training, title string) error {
	res := plot.New()
	res.Title.Text = title
	res.X.Label.Text = "CG iteration"
	res.Y.Label.Text = "relative residual ‖r‖/‖b‖"
	res.Y.Scale = plot.LogScale{}
	res.Y.Tick.Marker = logTicks{}
	var pts plotter.XYs
	for i, r := range tr.Residuals {
		if r > 0 && !math.IsInf(r, 0) {
			pts = append(pts, plotter.XY{X: float64(i + 1), Y: r})
		}
	}
	if len(pts) == 0 {
		return fmt.Errorf("plot: no residuals to draw")
	}
	line, points, err := plotter.NewLinePoints(pts)
	if err != nil {
		return err
	}
	res.Add(line, points, plotter.NewGrid())
	panels := []*plot.Plot{res}

	if len(tr.Validation) > 0 {
		name, get := validationMetric(tr.Validation[0].Metrics)
		val := plot.New()
		val.X.Label.Text = "CG iteration"
		val.Y.Label.Text = "validation " + name
		var vp plotter.XYs
		for _, v := range tr.Validation {
			if x := get(v.Metrics); x != nil {
				vp = append(vp, plotter.XY{X: float64(v.Iteration), Y: *x})
			}
		}
		if len(vp) > 0 {
			l, p, err := plotter.NewLinePoints(vp)
			if err != nil {
				return err
			}
			val.Add(l, p, plotter.NewGrid())
			panels = append(panels, val)
		}
	}
	return drawPanels(w, panels)
}

func panelsColumn(ps []*plot.Plot) [][]*plot.Plot {
	out := make([][]*plot.Plot, len(ps))
	for i, p := range ps {
		out[i] = []*plot.Plot{p}
	}
	return out
}

// validationMetric picks the metric to plot: RMSE for regression, error
// rate for classification.
func validationMetric(m ooc.Metrics) (string, func(ooc.Metrics) *float64) {
	if m.RMSE != nil {
		return "RMSE", func(m ooc.Metrics) *float64 { return m.RMSE }
	}
	return "error rate", func(m ooc.Metrics) *float64 { return m.ErrorRate }
}

// logTicks labels a log axis at 1, 2 and 5 times the powers of ten in
// its range (plot.LogTicks labels only the powers of ten, so a residual
// that stays within one decade got no labels at all), with unlabelled
// ticks at the other integers.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	var ticks []plot.Tick
	for k := math.Floor(math.Log10(lo)); k <= math.Ceil(math.Log10(hi)); k++ {
		p := math.Pow(10, k)
		for m := 1.0; m < 10; m++ {
			v := m * p
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}
