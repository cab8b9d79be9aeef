package ooc

import (
	"math"
	"slices"

	"github.com/falkon-ooc/falkon-ooc/model"
)

// Label codes and their alignment live in package model (labels.go);
// these are the names the fit uses.
var (
	targetLabels = model.TargetLabels
	labelCodes   = model.LabelCodes
	relabel      = model.RelabelTo
)

// classNames returns the label names of the classes cls (codes into
// labels), or nil when labels is nil.
func classNames(target string, labels []string, cls []float64) ([]string, error) {
	if labels == nil {
		return nil, nil
	}
	names := make([]string, len(cls))
	for i, c := range cls {
		j := int(c)
		if c != math.Trunc(c) || j < 0 || j >= len(labels) {
			return nil, configErr("target %q: value %v is not the code of one of its %d labels", target, c, len(labels))
		}
		names[i] = labels[j]
	}
	return slices.Clone(names), nil
}
