package model_test

import (
	"fmt"
	"log"

	"github.com/falkon-ooc/falkon-ooc/model"
)

// A Predictor serves batches of rows with no allocation once warm; a
// server shares a PredictorPool between its handlers.
func ExamplePredictor() {
	m, err := model.Load("../cmd/falkon-ooc/testdata/model_v1_binary.falkon")
	if err != nil {
		log.Fatal(err)
	}
	p := m.NewPredictor()
	var out model.Prediction
	x := []float64{ // two rows of the model's features
		0.5, -1,
		-2, 1.5,
	}
	if err := p.PredictTo(&out, x, 2, model.WantProba); err != nil {
		log.Fatal(err)
	}
	names := m.ClassNames()
	for r := range out.Rows {
		fmt.Printf("row %d: class %s, P = %.2f\n", r, names[out.Class[r]], out.Proba[2*r+out.Class[r]])
	}
	// Output:
	// row 0: class 1, P = 0.54
	// row 1: class 0, P = 1.00
}
