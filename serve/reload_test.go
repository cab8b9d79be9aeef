package serve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/falkon-ooc/falkon-ooc/serve/client"
)

// TestReloadUnderLoad swaps two models 100 times while clients send
// requests of 1 to 5 rows (gathered into blocks): no request fails, and
// every answer is wholly that of the model it names.
func TestReloadUnderLoad(t *testing.T) {
	feats := []string{"a", "b"}
	models := map[string]*linModel{"A": newLin(feats, []float64{2, -1}, 0.5), "B": newLin(feats, []float64{-3, 0.5}, 10)}
	h, srv := newServer(t, models["A"], Options{MaxBatch: 16, MaxDelay: 200 * time.Microsecond})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var requests, failures atomic.Int64
	var mu sync.Mutex
	var problems []string
	report := func(s string) {
		failures.Add(1)
		mu.Lock()
		if len(problems) < 10 {
			problems = append(problems, s)
		}
		mu.Unlock()
	}
	for c := range 8 {
		wg.Go(func() {
			hc := &http.Client{}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				n := 1 + (c+i)%5
				var body strings.Builder
				body.WriteString(`{"rows": [`)
				rows := make([][]float64, n)
				for r := range n {
					rows[r] = []float64{float64(c*1000 + i), float64(r)}
					if r > 0 {
						body.WriteString(",")
					}
					fmt.Fprintf(&body, `{"a": %v, "b": %v}`, rows[r][0], rows[r][1])
				}
				body.WriteString("]}")
				resp, err := hc.Post(srv.URL+"/v1/predict", "application/json", strings.NewReader(body.String()))
				if err != nil {
					report(err.Error())
					continue
				}
				a, err := readAnswer(resp)
				requests.Add(1)
				if err != nil {
					report(err.Error())
					continue
				}
				m := models[a.Model]
				if m == nil || a.Rows != n {
					report(fmt.Sprintf("answer from %q with %d rows", a.Model, a.Rows))
					continue
				}
				for r := range n {
					if got, want := a.Columns[0].Values[r], m.want(rows[r], 0); got != want {
						report(fmt.Sprintf("model %s row %d: %v, want %v (a mix of models)", a.Model, r, got, want))
					}
				}
			}
		})
	}
	for i := range 100 {
		id := "B"
		if i%2 == 1 {
			id = "A"
		}
		if err := h.Swap(models[id], id); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A model that fails to load leaves the current one serving.
	err := h.Reload(func() (Model, string, error) { return nil, "", errors.New("damaged file") })
	if err == nil || h.ModelID() != "A" {
		t.Errorf("a failed reload: %v, serving %s", err, h.ModelID())
	}
	bad := newLin([]string{"a", "a"}, []float64{1, 1}, 0)
	if err := h.Reload(func() (Model, string, error) { return bad, "C", nil }); err == nil || !strings.Contains(err.Error(), `feature "a" appears twice`) || h.ModelID() != "A" {
		t.Errorf("an inconsistent model: %v, serving %s", err, h.ModelID())
	}
	time.Sleep(20 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("%d requests across 100 reloads", requests.Load())
	if failures.Load() > 0 || requests.Load() < 100 {
		t.Errorf("%d of %d requests failed: %q", failures.Load(), requests.Load(), problems)
	}
}

func readAnswer(resp *http.Response) (*client.Answer, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	return client.DecodeJSON(bytes.NewReader(b))
}
