package ooc

import "context"

// EvaluateValForTest returns the validation rows' Evaluator of m,
// encoded, as calibrateFit computes it (evaluateVal) and as m.evaluate
// reads them from opts.Validation.
func EvaluateValForTest(ctx context.Context, m *Model, opts RunOptions) (viaPass, read []byte, err error) {
	a, err := m.evaluateVal(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	b, err := m.evaluate(ctx, opts.Validation, PredictOptions{Workers: opts.Workers})
	if err != nil {
		return nil, nil, err
	}
	if viaPass, err = a.MarshalBinary(); err != nil {
		return nil, nil, err
	}
	read, err = b.MarshalBinary()
	return viaPass, read, err
}
