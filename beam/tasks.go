package beam

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"reflect"
	"time"

	sdk "github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
)

// Task jobs: the jobs that are not passes over a store's chunks (the steps
// of a distributed ingest, predictions). Task i of n runs on a worker and
// returns bytes; one reduction writes every task's bytes, in task order,
// to a result file the driver reads back.
//
//	CreateList(0 … n−1) → Reshuffle → ParDo(taskFn) → GroupByKey(one key) → ParDo(collectFn)

func init() {
	register.DoFn3x1[context.Context, int, func(int, []byte), error](&taskFn{})
	register.DoFn3x1[context.Context, int, func(*[]byte) bool, error](&collectFn{})
	sdk.RegisterType(reflect.TypeOf((*taskFn)(nil)).Elem())
	sdk.RegisterType(reflect.TypeOf((*collectFn)(nil)).Elem())
}

// taskKind decodes a job's description on a worker and returns the
// function that runs its task i.
type taskKind func(ctx context.Context, job []byte) (func(ctx context.Context, i int) ([]byte, error), error)

// taskKinds are the task jobs a worker understands, by name.
var taskKinds = map[string]taskKind{}

// taskHook, when set (by tests, in the process that runs the workers), runs
// before each task; an error fails that bundle.
var taskHook func(kind string, i int) error

// taskFn runs one task and emits (0, task index ‖ its bytes).
type taskFn struct {
	Kind    string
	Job     []byte // the job's description, or nil to read JobFile
	JobFile string

	run func(ctx context.Context, i int) ([]byte, error)
}

func (f *taskFn) Setup(ctx context.Context) error {
	kind, ok := taskKinds[f.Kind]
	if !ok {
		return fmt.Errorf("falkon-ooc beam worker: unknown task kind %q", f.Kind)
	}
	job := f.Job
	if job == nil {
		var err error
		if job, err = readFile(ctx, f.JobFile, maxJobBytes); err != nil {
			return fmt.Errorf("falkon-ooc beam worker: the %s job's description: %w", f.Kind, err)
		}
	}
	var err error
	if f.run, err = kind(ctx, job); err != nil {
		return fmt.Errorf("falkon-ooc beam worker: %s job: %w", f.Kind, err)
	}
	return nil
}

func (f *taskFn) ProcessElement(ctx context.Context, i int, emit func(int, []byte)) error {
	if h := taskHook; h != nil {
		if err := h(f.Kind, i); err != nil {
			return err
		}
	}
	b, err := f.run(ctx, i)
	if err != nil {
		return fmt.Errorf("%s task %d: %w", f.Kind, i, err)
	}
	out := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+len(b)), uint64(i))
	emit(0, append(out, b...))
	return nil
}

// collectFn writes every task's bytes, in task order, to Out: "FKBT",
// version 1 (uint32), the number of tasks (uint64), each task's length
// (uint64) and bytes, then a CRC-32C of everything before it. A task
// delivered twice must be bit-identical and counts once.
type collectFn struct {
	Out   string
	Tasks int
}

const tasksMagic = "FKBT"

func (f *collectFn) ProcessElement(ctx context.Context, _ int, parts func(*[]byte) bool) error {
	got := make([][]byte, f.Tasks)
	var b []byte
	for parts(&b) {
		if len(b) < 8 {
			return fmt.Errorf("falkon-ooc beam collect: a task result of %d bytes", len(b))
		}
		i := binary.LittleEndian.Uint64(b)
		if i >= uint64(f.Tasks) {
			return fmt.Errorf("falkon-ooc beam collect: task %d of %d", i, f.Tasks)
		}
		if got[i] != nil {
			if !bytes.Equal(got[i], b[8:]) {
				return fmt.Errorf("falkon-ooc beam collect: task %d delivered twice with different results", i)
			}
			continue
		}
		got[i] = bytes.Clone(b[8:])
	}
	out := append([]byte(tasksMagic), 1, 0, 0, 0)
	out = binary.LittleEndian.AppendUint64(out, uint64(f.Tasks))
	for i, g := range got {
		if g == nil {
			return fmt.Errorf("falkon-ooc beam collect: no result for task %d of %d", i, f.Tasks)
		}
		out = binary.LittleEndian.AppendUint64(out, uint64(len(g)))
		out = append(out, g...)
	}
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
	if err := writeFile(ctx, f.Out, out); err != nil {
		return fmt.Errorf("falkon-ooc beam collect: %w", err)
	}
	return nil
}

// maxTaskResults bounds the result file of a task job.
const maxTaskResults = 1 << 32

// readTasks reads and removes a result file written by collectFn.
func readTasks(ctx context.Context, out string, tasks int) ([][]byte, error) {
	b, err := readFile(ctx, out, maxTaskResults)
	if err != nil {
		return nil, fmt.Errorf("the job's result: %w", err)
	}
	removeFile(ctx, out)
	bad := fmt.Errorf("the job's result %s is corrupt or incomplete (%d bytes)", out, len(b))
	if len(b) < 20 || string(b[:4]) != tasksMagic || binary.LittleEndian.Uint32(b[4:]) != 1 ||
		binary.LittleEndian.Uint64(b[8:]) != uint64(tasks) ||
		crc32.Checksum(b[:len(b)-4], castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, bad
	}
	rest := b[16 : len(b)-4]
	res := make([][]byte, tasks)
	for i := range res {
		if len(rest) < 8 {
			return nil, bad
		}
		n := binary.LittleEndian.Uint64(rest)
		if n > uint64(len(rest)-8) {
			return nil, bad
		}
		res[i], rest = rest[8:8+n], rest[8+n:]
	}
	if len(rest) != 0 {
		return nil, bad
	}
	return res, nil
}

// runTasks runs tasks tasks of kind as a Beam job, again up to
// opts.Attempts times in all if it fails, and returns their results in
// task order. Options.Runner, Temp, Attempts and OnJob apply.
func runTasks(ctx context.Context, opts Options, kind string, job []byte, tasks int) ([][]byte, error) {
	if !sdk.Initialized() {
		sdk.Init()
	}
	if tasks == 0 {
		return nil, nil
	}
	fn := &taskFn{Kind: kind, Job: job}
	if len(job) > maxInlineJob {
		fn.Job, fn.JobFile = nil, uniqueName(opts.Temp, "job")
		if err := writeFile(ctx, fn.JobFile, job); err != nil {
			return nil, fmt.Errorf("beam: the %s job's description: %w", kind, err)
		}
		defer removeFile(context.WithoutCancel(ctx), fn.JobFile)
	}
	var errs []error
	for attempt := 1; attempt <= opts.Attempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out := uniqueName(opts.Temp, "tasks")
		p, s := sdk.NewPipelineWithRoot()
		idx := make([]int, tasks)
		for i := range idx {
			idx[i] = i
		}
		parts := sdk.ParDo(s, fn, sdk.Reshuffle(s, sdk.CreateList(s, idx)))
		sdk.ParDo0(s, &collectFn{Out: out, Tasks: tasks}, sdk.GroupByKey(s, parts))
		start := time.Now()
		var res [][]byte
		_, err := sdk.Run(ctx, opts.Runner, p)
		if err == nil {
			res, err = readTasks(ctx, out, tasks)
		}
		if opts.OnJob != nil {
			var n int
			for _, r := range res {
				n += len(r)
			}
			opts.OnJob(JobStats{Kind: kind, Attempt: attempt, Seconds: time.Since(start).Seconds(), JobBytes: len(job),
				JobFile: fn.JobFile != "", PartBytes: n, Parts: tasks, Err: err})
		}
		if err == nil {
			return res, nil
		}
		errs = append(errs, fmt.Errorf("attempt %d: %w", attempt, err))
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("beam: %s job failed: %w", kind, errors.Join(errs...))
}

// taskOptions fills the defaults of the Options fields a task job uses:
// the runner, the attempts and, with Prism, a local temporary directory
// (removed by the returned function).
func taskOptions(opts Options) (Options, func(), error) {
	if opts.Runner == "" {
		opts.Runner = "prism"
	}
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultAttempts
	}
	if opts.Partitions < 0 {
		return opts, nil, fmt.Errorf("beam: %d partitions: %w", opts.Partitions, errNoParts)
	}
	if opts.Partitions == 0 {
		opts.Partitions = DefaultPartitions
	}
	if opts.Temp != "" {
		return opts, func() {}, nil
	}
	if opts.Runner != "prism" {
		return opts, nil, fmt.Errorf("beam: runner %s needs Options.Temp (--temp): a directory the workers write and this process reads", opts.Runner)
	}
	dir, err := mkdirTemp()
	if err != nil {
		return opts, nil, err
	}
	opts.Temp = dir
	return opts, func() { removeAll(dir) }, nil
}
