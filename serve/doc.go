// Package serve answers a fitted model's predictions over HTTP: the
// handler behind falkon-ooc serve, an http.Handler a Go service can
// mount.
//
// # Overview
//
// A Handler serves one model (Load reads a model file; FromModel adapts
// a *model.Model; any Model will do):
//
//	POST /v1/predict   rows in, predictions out
//	GET  /v1/model     {"id": ID, "model": the summary inspect --json shows}
//	GET  /healthz      200 while the process serves
//	GET  /readyz       200 until Drain, then 503
//	GET  /metrics      Prometheus metrics (falkon_serve_*, Go, process)
//
// A prediction request is JSON (Content-Type application/json), rows
// keyed by feature name or one array per feature,
//
//	{"rows": [{"x1": 0.5, "x2": 3}, {"x1": 1, "x2": null}]}
//	{"columns": {"x1": [0.5, 1], "x2": [3, null]}}
//
// or an Arrow IPC stream (application/vnd.apache.arrow.stream) with one
// integer or floating-point column per feature. Features are matched by
// name; each must be there once and nothing else may. A null (or, in
// Arrow, a NaN or ±Inf) reads as Options.Nulls says. The query
// parameters proba, std and interval=LEVEL ask for class probabilities,
// standard deviations and central intervals. The answer holds the
// columns falkon-ooc predict writes (TARGET_pred, score or score_CLASS
// or p_CLASS, TARGET_std, TARGET_lower and TARGET_upper), in the
// request's form: {"model": ID, "rows": N, "columns": {NAME: [values]}}
// for JSON, an Arrow IPC stream (and the header Falkon-Model: ID) for
// Arrow. A refused request is answered with its status and
//
//	{"error": "row 3, field \"x2\": a string, not a number", "row": 3, "field": "x2"}
//
// naming the row (counted from 0) and the feature or parameter at
// fault: 400 for a bad body, 413 past MaxBody or MaxRows, 415 for
// another Content-Type, 408 for a body that does not arrive in time, 503
// (with Retry-After) past MaxInflight or MaxMemory.
//
// Requests are decoded as they arrive, never buffered whole, into row
// buffers reused from request to request. Workers (Options.Workers, one
// per CPU) run the kernel: each takes a request from the queue and
// gathers the requests waiting behind it, up to MaxBatch rows (waiting
// up to MaxDelay for more), into one block, then hands each request its
// own rows' predictions. Package client calls a server from Go.
//
// # Concurrency
//
// A Handler is safe for concurrent use. Swap and Reload replace the
// model atomically: a request uses the model that was current when it
// arrived from decoding to answer, a block gathers only requests of one
// model, and so every answer is wholly one model's. Close stops the
// workers once http.Server.Shutdown has returned.
//
// # Invariants
//
//   - An answer is the model's predictions of the request's rows, equal
//     to falkon-ooc predict's for the same rows within 1e-12 (blocks of
//     other sizes may sum in another order), and names the model (ID).
//   - Memory is bounded: the body is read through a 32 KiB buffer, at
//     most MaxBody bytes of it; the decoded rows of all requests in flight
//     are at most MaxMemory bytes; requests past MaxInflight are refused.
//   - A model that fails to load or to check leaves the current one
//     serving (Reload).
//   - No user input makes the server panic.
//
// The handler is FALKON's predictor (Rudi, Carratino and Rosasco,
// NeurIPS 2017; Meanti et al., NeurIPS 2020) served as blocks of kernel
// rows: K(X, C)·α for the rows X of the requests gathered.
package serve
