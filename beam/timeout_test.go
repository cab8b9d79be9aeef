package beam

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/falkon-ooc/falkon-ooc/chunkstore/ingest"
	"github.com/falkon-ooc/falkon-ooc/ooc"
)

// silentEndpoint listens on loopback, accepts every connection and never
// answers: the S3 endpoint that hung fit and predict without limit.
func silentEndpoint(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip("no loopback:", err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return "http://" + ln.Addr().String()
}

// TestObjectTimeout: against an endpoint that accepts connections and
// never answers, fit, predict and ingest fail within ObjectTimeout (plus
// a margin), naming the URL and the flag, instead of hanging.
func TestObjectTimeout(t *testing.T) {
	ep := silentEndpoint(t)
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL": ep, "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_MAX_ATTEMPTS": "3",
	} {
		t.Setenv(k, v)
	}
	old := ObjectTimeout
	ObjectTimeout = time.Second
	t.Cleanup(func() { ObjectTimeout = old })
	ctx := context.Background()
	dir := t.TempDir()
	for _, c := range []struct {
		name, url string
		run       func() error
	}{
		{"fit", "s3://bucket/store", func() error {
			_, err := Fit(ctx, ooc.Config{Centers: 5}, ooc.RunOptions{}, Options{Store: "s3://bucket/store"})
			return err
		}},
		{"ingest", "s3://bucket/in/a.csv", func() error {
			_, err := Ingest(ctx, []string{"s3://bucket/in/a.csv"}, ingest.Config{Out: filepath.Join(dir, "s.store"), Targets: []string{"y"}}, Options{})
			return err
		}},
		{"read", "s3://bucket/x", func() error {
			_, err := readFile(ctx, "s3://bucket/x", 100)
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			err := c.run()
			took := time.Since(start)
			var te *TimeoutError
			if !errors.As(err, &te) || !strings.Contains(err.Error(), c.url) ||
				!strings.Contains(err.Error(), "no answer from object storage within 1s (--object-timeout)") {
				t.Fatalf("after %v: %v; want a TimeoutError naming %s", took, err, c.url)
			}
			if took > 8*time.Second {
				t.Fatalf("took %v with a 1 s timeout", took)
			}
		})
	}
}
