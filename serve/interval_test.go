package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/falkon-ooc/falkon-ooc/model"
	"github.com/falkon-ooc/falkon-ooc/serve/client"
)

// TestIntervalMethod: interval_method=conformal|gaussian sets an
// interval's multipliers as falkon-ooc predict --interval-method does, one
// per output; the answer says which method it used (the JSON key, the
// Arrow header); and each mistake is refused naming interval_method.
func TestIntervalMethod(t *testing.T) {
	m := &linModel{features: []string{"a", "b"}, w: [][]float64{{2, -1}, {0.5, 1}}, bias: []float64{0.5, -1}, std: true}
	conformal := []float64{1.25, 2.5} // per output
	m.intervalZ = func(z []float64, level float64, method string) (string, error) {
		if level != 0.9 {
			return "", fmt.Errorf("%w (its 40 validation rows reach 0.95)", model.ErrNoConformal)
		}
		if method == "gaussian" {
			for j := range z {
				z[j] = IntervalZ(level)
			}
			return method, nil
		}
		copy(z, conformal)
		return "conformal", nil
	}
	_, srv := newServer(t, m, Options{})
	c := client.New(srv.URL, nil)
	row := []float64{1, 2}
	for _, tc := range []struct {
		method, used string
		z            []float64
	}{
		{"", "conformal", conformal},
		{"conformal", "conformal", conformal},
		{"gaussian", "gaussian", []float64{IntervalZ(0.9), IntervalZ(0.9)}},
	} {
		q := client.Query{Interval: 0.9, IntervalMethod: tc.method}
		for _, arrow := range []bool{false, true} {
			var a *client.Answer
			var err error
			if arrow {
				a, err = c.PredictArrow(context.Background(), arrowRecord(t, []int64{1}, []float32{2}, nil), q)
			} else {
				a, err = c.PredictRows(context.Background(), []map[string]float64{{"a": row[0], "b": row[1]}}, q)
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.IntervalMethod != tc.used {
				t.Errorf("interval_method=%q (Arrow %v): the answer says %q, want %q", tc.method, arrow, a.IntervalMethod, tc.used)
			}
			var names []string
			for _, col := range a.Columns {
				names = append(names, col.Name)
			}
			if got := strings.Join(names, ","); got != "y0_pred,y1_pred,y0_lower,y0_upper,y1_lower,y1_upper" {
				t.Fatalf("columns %s", got)
			}
			for o := range 2 {
				s := m.want(row, o)
				sd := 0.25 + math.Abs(s)/100 // the fake's std
				lo, hi := a.Columns[2+2*o].Values[0], a.Columns[3+2*o].Values[0]
				if lo != s-tc.z[o]*sd || hi != s+tc.z[o]*sd {
					t.Errorf("interval_method=%q, output %d: [%v, %v], want %v ± %v·%v", tc.method, o, lo, hi, s, tc.z[o], sd)
				}
			}
		}
	}
	// The JSON answer names the method after the rows.
	code, out := post(t, srv.URL+"/v1/predict?interval=0.9&interval_method=gaussian", "application/json", `{"rows": []}`)
	if want := `{"model":"A","rows":0,"interval_method":"gaussian","columns":{`; code != 200 || !strings.HasPrefix(out, want) {
		t.Errorf("%d %s, want %s…", code, out, want)
	}
	for _, tc := range []struct{ query, msg string }{
		{"interval=0.9&interval_method=student", `query parameter interval_method="student" is not conformal or gaussian`},
		{"interval_method=gaussian", `interval_method sets how the bounds of an interval are found: ask for one with interval too (interval=0.9)`},
		{"interval=0.99&interval_method=conformal", `interval_method=conformal: the model has no conformal calibration at this level (its 40 validation rows reach 0.95); ask for interval_method=gaussian, or fit the model again with --uncertainty and more validation rows`},
	} {
		code, out := post(t, srv.URL+"/v1/predict?"+tc.query, "application/json", `{"rows": []}`)
		var e struct{ Error, Field string }
		if err := json.Unmarshal([]byte(out), &e); err != nil || code != 400 || e.Error != tc.msg || e.Field != "interval_method" {
			t.Errorf("%s: %d %s\nwant 400 %q naming interval_method", tc.query, code, out, tc.msg)
		}
	}
	// A model without a calibration of its own (IntervalZ nil) gives
	// Gaussian intervals, and refuses conformal ones.
	m.intervalZ = nil
	_, srv2 := newServer(t, m, Options{})
	code, out = post(t, srv2.URL+"/v1/predict?interval=0.9&interval_method=conformal", "application/json", `{"rows": []}`)
	if want := `interval_method=conformal: the model has no conformal calibration of its intervals; ask for interval_method=gaussian`; code != 400 || !strings.Contains(out, want) {
		t.Errorf("%d %s, want 400 %s", code, out, want)
	}
	code, out = post(t, srv2.URL+"/v1/predict?interval=0.9", "application/json", `{"rows": []}`)
	if code != 200 || !strings.Contains(out, `"interval_method":"gaussian"`) {
		t.Errorf("%d %s, want the Gaussian method", code, out)
	}
}

// TestIntervalMethodFitted: a fitted model's calibration answers
// interval_method through FromModel: a model written before conformal
// calibration has none, so conformal is refused with the model's reason
// and the default is Gaussian.
func TestIntervalMethodFitted(t *testing.T) {
	mm, err := model.Load("../ooc/testdata/model_v2_regression_std.fkom")
	if err != nil {
		t.Fatal(err)
	}
	fm, err := FromModel(mm)
	if err != nil {
		t.Fatal(err)
	}
	_, srv := newServer(t, fm, Options{})
	body := `{"rows": [{`
	for j, f := range mm.Features() {
		if j > 0 {
			body += ","
		}
		body += fmt.Sprintf("%q: %v", f, 0.1*float64(j+1))
	}
	body += `}]}`
	code, out := post(t, srv.URL+"/v1/predict?interval=0.9&interval_method=conformal", "application/json", body)
	if want := `interval_method=conformal: the model has no conformal calibration at this level; ask for interval_method=gaussian, or fit the model again with --uncertainty and more validation rows`; code != 400 || !strings.Contains(out, want) {
		t.Errorf("%d %s, want 400 %s", code, out, want)
	}
	code, out = post(t, srv.URL+"/v1/predict?interval=0.9", "application/json", body)
	if code != 200 || !strings.Contains(out, `"interval_method":"gaussian"`) {
		t.Errorf("%d %s, want the Gaussian method", code, out)
	}
}
