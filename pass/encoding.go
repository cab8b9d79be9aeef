package pass

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Version is a version of the wire encoding of a Job.
type Version uint8

// The versions of the encoding this package reads (MinVersion to
// MaxVersion). It writes the lowest version that carries the job's
// meaning: 3 for a Scores pass (version 2 readers do not know the kind);
// 2 for a Gram pass, and for a TargetProduct, KernelProduct or logistic
// pass that holds rows out (version 1 readers do not know the kind, or
// would read every row); 1 otherwise.
const (
	MinVersion Version = 1
	MaxVersion Version = 3
)

// ErrVersion is returned (wrapped) when a job's encoding has a version
// this package does not read, or none.
var ErrVersion = errors.New("pass: unsupported job encoding version")

// jobFields is Job without its methods, so that its fields encode the
// default way.
type jobFields Job

// MarshalJSON encodes the job as a JSON object of its fields (the names
// in their tags) and "version", the lowest that carries its meaning
// (see MaxVersion). The round trip through UnmarshalJSON is exact:
// float64 values keep every bit.
func (j Job) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Version Version `json:"version"`
		*jobFields
	}{j.version(), (*jobFields)(&j)})
}

// version is the lowest version of the encoding that carries the job's
// meaning.
func (j *Job) version() Version {
	multi := j.Kind == GroupKernelProduct || j.Kind == GroupTargetProduct
	if j.Kind == Scores {
		return 3
	}
	if j.Kind == Gram || j.Holdout != nil && !multi {
		return 2
	}
	return 1
}

// UnmarshalJSON decodes a job that MarshalJSON encoded. An encoding
// without a version, or of a version outside MinVersion to MaxVersion,
// is an error wrapping ErrVersion, and leaves j zero. It does not
// validate the job: NewWorker and LocalExecutor.Pass do.
func (j *Job) UnmarshalJSON(b []byte) error {
	var w struct {
		Version *int64 `json:"version"`
		*jobFields
	}
	w.jobFields = (*jobFields)(j)
	if err := json.Unmarshal(b, &w); err != nil {
		*j = Job{}
		return err
	}
	switch v := w.Version; {
	case v == nil:
		*j = Job{}
		return fmt.Errorf("%w: the job has none (this build reads versions %d to %d)", ErrVersion, MinVersion, MaxVersion)
	case *v < int64(MinVersion) || *v > int64(MaxVersion):
		*j = Job{}
		return fmt.Errorf("%w %d (this build reads versions %d to %d)", ErrVersion, *v, MinVersion, MaxVersion)
	}
	return nil
}
