package cli

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// countingBuffer is a syncBuffer that counts its writes.
type countingBuffer struct {
	syncBuffer
	mu sync.Mutex
	n  int
}

func (c *countingBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.syncBuffer.Write(p)
}

// TestLogWriterLosesNoLine: lines written concurrently all arrive, whole, in far fewer
// writes, after the delay; Flush writes the rest at once.
func TestLogWriterLosesNoLine(t *testing.T) {
	out := &countingBuffer{}
	lw := newLogWriter(out, 20*time.Millisecond)
	log := slog.New(slog.NewJSONHandler(lw, nil))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				log.Info("request", "g", g, "i", i)
			}
		})
	}
	wg.Wait()
	for deadline := time.Now().Add(2 * time.Second); strings.Count(out.String(), "\n") < 4000 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if n := strings.Count(out.String(), "\n"); n != 4000 {
		t.Fatalf("%d lines arrived after the delay; want 4000", n)
	}
	lw2 := newLogWriter(out, time.Hour)
	slog.New(slog.NewJSONHandler(lw2, nil)).Info("stopped")
	if strings.Contains(out.String(), "stopped") {
		t.Fatal("a line was written before its delay")
	}
	if err := lw2.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 4001 || !strings.Contains(lines[4000], `"msg":"stopped"`) {
		t.Fatalf("%d lines, last %q; want 4001 ending with stopped", len(lines), lines[len(lines)-1])
	}
	seen := map[string]bool{}
	for _, l := range lines[:4000] {
		if !strings.HasPrefix(l, `{"time":`) || !strings.HasSuffix(l, "}") || !strings.Contains(l, `"g":`) {
			t.Fatalf("torn line %q", l)
		}
		seen[l[strings.Index(l, `"g":`):]] = true
	}
	if len(seen) != 4000 {
		t.Errorf("%d distinct lines; want 4000", len(seen))
	}
	if out.n > 400 {
		t.Errorf("%d writes for 4001 lines; want them gathered", out.n)
	}
}

// TestServeFlushesLogAtShutdown: when serve returns, stderr holds the line of its last
// request and "stopped", without waiting for the flush delay.
func TestServeFlushesLogAtShutdown(t *testing.T) {
	s := startServer(t, testLimits)
	resp, err := http.Get("http://" + s.addr + "/no-such-path-at-shutdown")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	out := s.stderr.String()
	if !strings.Contains(out, `"path":"/no-such-path-at-shutdown"`) || !strings.HasSuffix(out, "\"msg\":\"stopped\"}\n") {
		t.Errorf("stderr after serve returned:\n%s", out)
	}
}

// BenchmarkRequestLog: serve's per-request line (as httpapi logs it), from parallel
// requests, into a file written directly and through logWriter.
func BenchmarkRequestLog(b *testing.B) {
	for _, gathered := range []bool{false, true} {
		name := map[bool]string{false: "direct", true: "logWriter"}[gathered]
		b.Run(name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "log"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			var w io.Writer = f
			var lw *logWriter
			if gathered {
				lw = newLogWriter(f, 50*time.Millisecond)
				w = lw
			}
			log := slog.New(slog.NewJSONHandler(w, nil))
			ctx := context.Background()
			b.SetParallelism(32)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					log.LogAttrs(ctx, slog.LevelInfo, "request", slog.String("id", "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"),
						slog.String("method", "GET"), slog.String("path", "/shipments/shp_0193a1b2c3d47e5f"),
						slog.String("pattern", "GET /shipments/{id}"), slog.Int("status", 200), slog.Int("bytes", 4211),
						slog.Int64("duration_us", 412))
				}
			})
			if lw != nil {
				lw.Flush()
			}
		})
	}
}
