package serve_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/falkon-ooc/falkon-ooc/serve"
)

// constant is a tiny Model: it predicts x1 + 2·x2.
type constant struct{}

func (constant) Info() serve.Info {
	return serve.Info{Features: []string{"x1", "x2"}, Targets: []string{"y"}, Task: "regression", K: 1}
}

func (constant) NewScorer() serve.Scorer { return scorer{} }

type scorer struct{}

func (scorer) Score(dst *serve.Result, x []float64, rows int, std bool) error {
	dst.Scores = dst.Scores[:0]
	for i := range rows {
		dst.Scores = append(dst.Scores, x[2*i]+2*x[2*i+1])
	}
	return nil
}

// A Handler mounted in a Go service: here under httptest, with a model of
// its own (serve.Load reads a model file).
func Example() {
	h, err := serve.New(constant{}, "demo", serve.Options{})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer func() { srv.Close(); h.Close() }()
	for _, body := range []string{
		`{"rows": [{"x1": 1, "x2": 2}, {"x2": 0.5, "x1": 0}]}`,
		`{"rows": [{"x1": 1, "x2": "two"}]}`,
	} {
		resp, err := http.Post(srv.URL+"/v1/predict", "application/json", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Print(resp.StatusCode, " ", string(out))
	}
	// Output:
	// 200 {"model":"demo","rows":2,"columns":{"y_pred":[5,1]}}
	// 400 {"error":"row 0, field \"x2\": a string, not a number","row":0,"field":"x2"}
}
