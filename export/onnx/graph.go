package onnx

import (
	"fmt"
	"math"

	pb "github.com/falkon-ooc/falkon-ooc/export/onnx/internal/onnxpb"
)

// builder collects the nodes and constants of one graph. Every value has
// an explicit name, so that the graph reads as the formulas of doc.go.
type builder struct {
	// io is the float type of the graph's input and float outputs; cur
	// that of the constants being added: float64, except in a float32
	// graph's kernel block (see kernelBlock).
	io, cur pb.TensorProto_DataType
	nodes   []*pb.NodeProto
	inits   []*pb.TensorProto
	names   map[string]bool
	// scalars are the [1] constants by name, which several parts of a
	// graph share ("one", "zero").
	scalars map[string]float64
}

func newBuilder(f32 bool) *builder {
	b := &builder{io: pb.TensorProto_DOUBLE, cur: pb.TensorProto_DOUBLE, names: map[string]bool{}, scalars: map[string]float64{}}
	if f32 {
		b.io = pb.TensorProto_FLOAT
	}
	return b
}

// f32 reports whether the constants being added are float32.
func (b *builder) f32() bool { return b.cur == pb.TensorProto_FLOAT }

// claim records a value name; a name given twice is a bug of the
// exporter.
func (b *builder) claim(name string) string {
	if b.names[name] {
		panic("onnx: value " + name + " defined twice")
	}
	b.names[name] = true
	return name
}

// op adds the node out = opType(inputs…) and returns out.
func (b *builder) op(out, opType string, inputs []string, attrs ...*pb.AttributeProto) string {
	b.nodes = append(b.nodes, &pb.NodeProto{
		Name: b.claim(out), OpType: opType, Input: inputs, Output: []string{out}, Attribute: attrs,
	})
	return out
}

// cast adds out = Cast(in) to the element type to.
func (b *builder) cast(out, in string, to pb.TensorProto_DataType) string {
	return b.op(out, "Cast", []string{in}, attrInt("to", int64(to)))
}

// output adds the graph output name = opType(inputs…), computed in
// float64: in a float32 graph the node's float64 result (name_f64) is
// cast to name. It returns the float64 result, for the nodes that use
// it.
func (b *builder) output(name, opType string, inputs []string, attrs ...*pb.AttributeProto) string {
	if b.io == pb.TensorProto_DOUBLE {
		return b.op(name, opType, inputs, attrs...)
	}
	v := b.op(name+"_f64", opType, inputs, attrs...)
	b.cast(name, v, pb.TensorProto_FLOAT)
	return v
}

// floats adds a constant of the current float type with the given shape
// and row-major values (rounded to float32 for a float32 constant).
func (b *builder) floats(name string, dims []int64, v []float64) string {
	return b.floatsOf(b.cur, name, dims, v)
}

func (b *builder) floatsOf(elem pb.TensorProto_DataType, name string, dims []int64, v []float64) string {
	checkShape(name, dims, len(v))
	t := &pb.TensorProto{Name: b.claim(name), Dims: dims, DataType: int32(elem)}
	if elem == pb.TensorProto_FLOAT {
		t.FloatData = make([]float32, len(v))
		for i, x := range v {
			t.FloatData[i] = float32(x)
		}
	} else {
		t.DoubleData = append([]float64(nil), v...)
	}
	b.inits = append(b.inits, t)
	return name
}

// scalar adds a constant of shape [1] of the current float type, which
// broadcasts against any tensor; float32 ones are named name_f32. A name
// is defined once; asking again for the same value returns it.
func (b *builder) scalar(name string, v float64) string {
	if b.f32() {
		name += "_f32"
	}
	if old, ok := b.scalars[name]; ok {
		if old != v && !(math.IsNaN(old) && math.IsNaN(v)) {
			panic(fmt.Sprintf("onnx: scalar %s is %v and %v", name, old, v))
		}
		return name
	}
	b.scalars[name] = v
	return b.floats(name, []int64{1}, []float64{v})
}

// ints adds an int64 constant.
func (b *builder) ints(name string, dims []int64, v []int64) string {
	checkShape(name, dims, len(v))
	b.inits = append(b.inits, &pb.TensorProto{Name: b.claim(name), Dims: dims, DataType: int32(pb.TensorProto_INT64), Int64Data: v})
	return name
}

// strings adds a string constant of shape [len(v)].
func (b *builder) strings(name string, v []string) string {
	data := make([][]byte, len(v))
	for i, s := range v {
		data[i] = []byte(s)
	}
	b.inits = append(b.inits, &pb.TensorProto{Name: b.claim(name), Dims: []int64{int64(len(v))}, DataType: int32(pb.TensorProto_STRING), StringData: data})
	return name
}

func checkShape(name string, dims []int64, n int) {
	want := int64(1)
	for _, d := range dims {
		want *= d
	}
	if want != int64(n) {
		panic(fmt.Sprintf("onnx: constant %s: %d values for shape %v", name, n, dims))
	}
}

func attrInt(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: name, Type: pb.AttributeProto_INT, I: v}
}

func attrInts(name string, v ...int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: name, Type: pb.AttributeProto_INTS, Ints: v}
}

// tensorInfo describes a graph input or output: a tensor of elem with the
// given dimensions, each a size or, for a string, a symbolic name.
func tensorInfo(name, doc string, elem pb.TensorProto_DataType, dims ...any) *pb.ValueInfoProto {
	shape := &pb.TensorShapeProto{}
	for _, d := range dims {
		dim := &pb.TensorShapeProto_Dimension{}
		switch v := d.(type) {
		case int:
			dim.Value = &pb.TensorShapeProto_Dimension_DimValue{DimValue: int64(v)}
		case string:
			dim.Value = &pb.TensorShapeProto_Dimension_DimParam{DimParam: v}
		default:
			panic(fmt.Sprintf("onnx: dimension %v of %s", d, name))
		}
		shape.Dim = append(shape.Dim, dim)
	}
	return &pb.ValueInfoProto{
		Name: name, DocString: doc,
		Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{ElemType: int32(elem), Shape: shape}}},
	}
}
