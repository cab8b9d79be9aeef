// Package onnxpb holds the ONNX protobuf messages (ModelProto, GraphProto,
// NodeProto, TensorProto, …) for the exporter in export/onnx.
//
// onnx.pb.go is generated, not written: onnx.proto is the official ONNX
// IR schema, the file onnx/onnx.proto3 of the ONNX project (release
// 1.23.0, commit f7546912001b), unchanged but for its name, compiled by
// protoc 3.21.12 with protoc-gen-go v1.36.12 (the google.golang.org/protobuf
// version in go.mod). To regenerate it, install both and run go generate
// in this directory.
package onnxpb

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go_opt=Monnx.proto=github.com/falkon-ooc/falkon-ooc/export/onnx/internal/onnxpb onnx.proto
