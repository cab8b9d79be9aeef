// Package client calls a falkon-ooc prediction server (package serve,
// falkon-ooc serve) from Go: rows as JSON objects or columns, or an
// Arrow record batch sent as an Arrow IPC stream.
//
// # Concurrency
//
// A Client is safe for concurrent use, as its http.Client is.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
)

// arrowStream is the media type of an Arrow IPC stream.
const arrowStream = "application/vnd.apache.arrow.stream"

// Client calls one server.
type Client struct {
	base string
	hc   *http.Client
}

// New returns a client of the server at base ("http://127.0.0.1:8080");
// hc nil means http.DefaultClient.
func New(base string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: base, hc: hc}
}

// Query says what a prediction asks for beside the predictions.
type Query struct {
	Proba    bool    // class probabilities instead of scores
	Std      bool    // predictive standard deviations
	Interval float64 // the central interval of this level (0: none)
	// IntervalMethod sets how the interval's bounds are found:
	// "conformal", "gaussian", or "" for the model's conformal
	// calibration when it reaches the level, else gaussian.
	IntervalMethod string
}

func (q Query) encode() string {
	v := url.Values{}
	if q.Proba {
		v.Set("proba", "true")
	}
	if q.Std {
		v.Set("std", "true")
	}
	if q.Interval > 0 {
		v.Set("interval", strconv.FormatFloat(q.Interval, 'g', -1, 64))
	}
	if q.IntervalMethod != "" {
		v.Set("interval_method", q.IntervalMethod)
	}
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// Answer is a server's answer: the predictions of each row, one column
// per output, named as falkon-ooc predict names its columns.
type Answer struct {
	Model   string // the identity of the model that answered
	Rows    int
	Columns []Column
	// Unseen counts, per categorical column, the request's values whose
	// level the model's encoding does not know (nil: none). They were
	// answered, read as the column's (other) level or as none.
	Unseen map[string]int64
	// IntervalMethod is how the interval's bounds were set ("conformal"
	// or "gaussian"), when the query asked for one.
	IntervalMethod string
}

// Column is one output column: numbers, or the class labels of a model
// with string classes.
type Column struct {
	Name   string
	Values []float64 // nil for labels; NaN where the server sent null
	Labels []string
}

// Column returns the column called name, or nil.
func (a *Answer) Column(name string) *Column {
	for i := range a.Columns {
		if a.Columns[i].Name == name {
			return &a.Columns[i]
		}
	}
	return nil
}

// Error is a request the server refused or failed.
type Error struct {
	Status int
	Msg    string
	Row    int    // -1 when no row is at fault
	Field  string // the feature, column or parameter at fault, or ""
}

func (e *Error) Error() string { return fmt.Sprintf("server answered %d: %s", e.Status, e.Msg) }

// PredictRows sends rows keyed by feature name.
func (c *Client) PredictRows(ctx context.Context, rows []map[string]float64, q Query) (*Answer, error) {
	body, err := json.Marshal(struct {
		Rows []map[string]float64 `json:"rows"`
	}{rows})
	if err != nil {
		return nil, err
	}
	return c.post(ctx, "application/json", bytes.NewReader(body), q)
}

// PredictValues sends rows keyed by column name whose values are
// numbers, strings (the levels of categorical columns, dates and RFC 3339
// timestamps of time columns), time.Time values, booleans or nil (a
// missing value): the input columns of a model with categorical and
// time features.
func (c *Client) PredictValues(ctx context.Context, rows []map[string]any, q Query) (*Answer, error) {
	body, err := json.Marshal(struct {
		Rows []map[string]any `json:"rows"`
	}{rows})
	if err != nil {
		return nil, err
	}
	return c.post(ctx, "application/json", bytes.NewReader(body), q)
}

// PredictColumns sends one array of values per feature.
func (c *Client) PredictColumns(ctx context.Context, cols map[string][]float64, q Query) (*Answer, error) {
	body, err := json.Marshal(struct {
		Columns map[string][]float64 `json:"columns"`
	}{cols})
	if err != nil {
		return nil, err
	}
	return c.post(ctx, "application/json", bytes.NewReader(body), q)
}

// PredictArrow sends rec, one column per feature (numbers, booleans,
// dates, timestamps, decimals; strings, integers or dictionaries of them
// for a categorical column), as an Arrow IPC stream, and reads the
// answer from the Arrow IPC stream the server returns.
func (c *Client) PredictArrow(ctx context.Context, rec arrow.RecordBatch, q Query) (*Answer, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(rec.Schema()))
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return c.post(ctx, arrowStream, &buf, q)
}

// Model returns the server's GET /v1/model document: {"id": …, "model":
// the model's summary as falkon-ooc inspect --json shows it}.
func (c *Client) Model(ctx context.Context) (json.RawMessage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/v1/model", nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, readError(resp)
	}
	return io.ReadAll(resp.Body)
}

func (c *Client) post(ctx context.Context, ct string, body io.Reader, q Query) (*Answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/predict"+q.encode(), body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", ct)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, readError(resp)
	}
	if resp.Header.Get("Content-Type") == arrowStream {
		a, err := readArrow(resp.Body, resp.Header.Get("Falkon-Model"))
		if err == nil {
			if u := resp.Header.Get("Falkon-Unseen"); u != "" {
				err = json.Unmarshal([]byte(u), &a.Unseen)
			}
			a.IntervalMethod = resp.Header.Get("Falkon-Interval-Method")
		}
		return a, err
	}
	return DecodeJSON(resp.Body)
}

func readError(resp *http.Response) error {
	var e struct {
		Error string `json:"error"`
		Row   *int   `json:"row"`
		Field string `json:"field"`
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if json.Unmarshal(b, &e) != nil || e.Error == "" {
		e.Error = string(b)
	}
	out := &Error{Status: resp.StatusCode, Msg: e.Error, Row: -1, Field: e.Field}
	if e.Row != nil {
		out.Row = *e.Row
	}
	return out
}

// DecodeJSON reads the JSON answer {"model": ID, "rows": N, "columns": {NAME: [values], …}}
// keeping the columns' order.
func DecodeJSON(r io.Reader) (*Answer, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var a Answer
	if err := expectDelim(dec, '{'); err != nil {
		return nil, err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch key {
		case "model":
			if err := dec.Decode(&a.Model); err != nil {
				return nil, err
			}
		case "rows":
			if err := dec.Decode(&a.Rows); err != nil {
				return nil, err
			}
		case "unseen":
			if err := dec.Decode(&a.Unseen); err != nil {
				return nil, err
			}
		case "interval_method":
			if err := dec.Decode(&a.IntervalMethod); err != nil {
				return nil, err
			}
		case "columns":
			if err := expectDelim(dec, '{'); err != nil {
				return nil, err
			}
			for dec.More() {
				name, err := dec.Token()
				if err != nil {
					return nil, err
				}
				var raw []any
				if err := dec.Decode(&raw); err != nil {
					return nil, err
				}
				col := Column{Name: fmt.Sprint(name)}
				for _, v := range raw {
					switch v := v.(type) {
					case string:
						col.Labels = append(col.Labels, v)
					case json.Number:
						f, err := strconv.ParseFloat(string(v), 64)
						if err != nil {
							return nil, err
						}
						col.Values = append(col.Values, f)
					case nil:
						col.Values = append(col.Values, math.NaN())
					default:
						return nil, fmt.Errorf("column %q holds %T", col.Name, v)
					}
				}
				a.Columns = append(a.Columns, col)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
		}
	}
	return &a, nil
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != d {
		return fmt.Errorf("answer: want %v, found %v", d, t)
	}
	return nil
}

// readArrow reads the answer's Arrow IPC stream.
func readArrow(r io.Reader, model string) (*Answer, error) {
	rd, err := ipc.NewReader(r)
	if err != nil {
		return nil, err
	}
	defer rd.Release()
	a := &Answer{Model: model}
	for _, f := range rd.Schema().Fields() {
		a.Columns = append(a.Columns, Column{Name: f.Name})
	}
	for rd.Next() {
		rec := rd.RecordBatch()
		a.Rows += int(rec.NumRows())
		for c := range a.Columns {
			switch col := rec.Column(c).(type) {
			case *array.Float64:
				for i := range col.Len() {
					v := col.Value(i)
					if col.IsNull(i) {
						v = math.NaN()
					}
					a.Columns[c].Values = append(a.Columns[c].Values, v)
				}
			case *array.String:
				for i := range col.Len() {
					a.Columns[c].Labels = append(a.Columns[c].Labels, col.Value(i))
				}
			default:
				return nil, fmt.Errorf("answer column %q is of type %s", a.Columns[c].Name, col.DataType())
			}
		}
	}
	if err := rd.Err(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return a, nil
}
