package model

import "fmt"

// Task is what the targets mean.
type Task string

// Tasks. TaskAuto asks the trainer to pick the task from the target's
// distinct values; a model's task is never TaskAuto.
const (
	TaskAuto       Task = ""
	TaskRegression Task = "regression"
	TaskBinary     Task = "binary"
	TaskMulticlass Task = "multiclass"
)

// ParseTask parses a task name; "auto" and "" give TaskAuto.
func ParseTask(s string) (Task, error) {
	switch Task(s) {
	case "auto", TaskAuto:
		return TaskAuto, nil
	case TaskRegression, TaskBinary, TaskMulticlass:
		return Task(s), nil
	}
	return "", fmt.Errorf("unknown task %q (want auto, regression, binary or multiclass)", s)
}

// Loss is the loss a model was fitted with. It matters to prediction
// only for classification: the scores of the logistic loss are log-odds,
// so the model's probabilities are σ of its scores (see Model.ProbaTo).
type Loss string

// Losses; "" is LossSquared.
const (
	LossSquared  Loss = "squared"
	LossLogistic Loss = "logistic"
)
