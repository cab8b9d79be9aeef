package main

import (
	"fmt"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// writeTunePlot draws, as a PNG, the validation surface of a search (best
// validation metric against λ, one line per σ) above every candidate's
// validation curve by CG iteration (coloured by σ, the chosen one thick).
func writeTunePlot(w io.Writer, res *ooc.TuneResult, title string) error {
	metric := "validation " + res.Metric
	sigmas := map[float64]int{}
	var order []float64
	for _, c := range res.Candidates {
		if _, ok := sigmas[c.Sigma]; !ok {
			sigmas[c.Sigma] = len(order)
			order = append(order, c.Sigma)
		}
	}
	surf := plot.New()
	surf.Title.Text = title
	surf.X.Label.Text = "λ"
	surf.X.Scale = plot.LogScale{}
	surf.X.Tick.Marker = plot.LogTicks{Prec: -1}
	surf.Y.Label.Text = "best " + metric
	curves := plot.New()
	curves.X.Label.Text = "CG iteration"
	curves.Y.Label.Text = metric
	for gi, s := range order {
		var pts plotter.XYs
		for i, c := range res.Candidates {
			if c.Sigma != s || math.IsInf(c.BestMetric, 0) {
				continue
			}
			pts = append(pts, plotter.XY{X: c.Lambda, Y: c.BestMetric})
			var cv plotter.XYs
			for _, p := range c.Validation {
				if v := pick(res.Metric, p.Metrics); v != nil {
					cv = append(cv, plotter.XY{X: float64(p.Iteration), Y: *v})
				}
			}
			if len(cv) == 0 {
				continue
			}
			l, err := plotter.NewLine(cv)
			if err != nil {
				return err
			}
			l.Color = plotutil.Color(gi)
			if i == res.Best {
				l.Width = 3 * vg.Points(1)
			}
			curves.Add(l)
		}
		if len(pts) == 0 {
			continue
		}
		l, p, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.Color, p.Color = plotutil.Color(gi), plotutil.Color(gi)
		surf.Add(l, p)
		name := fmt.Sprintf("σ = %.3g", s)
		if s == 0 {
			name = "kernel"
		}
		surf.Legend.Add(name, l, p)
	}
	surf.Add(plotter.NewGrid())
	curves.Add(plotter.NewGrid())
	surf.Legend.Top = true
	panels := []*plot.Plot{surf, curves}
	return drawPanels(w, panels)
}

// pick returns the named metric.
func pick(name string, m ooc.Metrics) *float64 {
	if name == "rmse" {
		return m.RMSE
	}
	return m.ErrorRate
}
