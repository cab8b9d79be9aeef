package model_test

import (
	"encoding/json"
	"os"
	"testing"
)

// readJSON returns the value of key in the JSON object of file path.
func readJSON[T any](t testing.TB, path, key string) T {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	var v T
	if err := json.Unmarshal(all[key], &v); err != nil {
		t.Fatalf("%s: %s: %v", path, key, err)
	}
	return v
}
