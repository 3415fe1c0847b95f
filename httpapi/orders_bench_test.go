package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/waybill/waybill/ingest"
)

// BenchmarkOrderImport measures signed order imports accepted per second, each durably
// committed to the inbox before its 202, beside a bare net/http handler in the same run.
func BenchmarkOrderImport(b *testing.B) {
	e := newEnv(b)
	acme := e.accounts["acme"]
	// Bodies must be unique across all of the benchmark's runs: a repeated body is a 200.
	var seq atomic.Int64
	benchVsBare(b, e.api, http.StatusAccepted, func(base string, _ int) *http.Request {
		body := orderBody(fmt.Sprintf("BENCH-%d", seq.Add(1)))
		req, _ := http.NewRequest("POST", base+"/webhook/custom-orders", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(ingest.OrganizationHeader, acme.OrganizationID)
		req.Header.Set(ingest.SignatureHeader, ingest.Sign(acme.IngestSecret, []byte(body)))
		return req
	})
}

// BenchmarkOrderImportProcessing measures the worker: orders/s from QUEUED imports to
// PROCESSED imports with their orders upserted.
func BenchmarkOrderImportProcessing(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	acme := e.accounts["acme"]
	for i := range b.N {
		if _, _, err := e.db.EnqueueImport(ctx, acme.ID, []byte(orderBody(fmt.Sprintf("P-%d", i))), nil); err != nil {
			b.Fatal(err)
		}
	}
	w := &ingest.Worker{Queue: e.db}
	b.ResetTimer()
	start := time.Now()
	if err := w.Drain(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "orders/s")
	b.StopTimer()
	l, err := e.db.ListOrders(ctx, acme.ID, "", pageAll)
	if err != nil || l.Total != min(b.N, 10000) && l.Total != -1 {
		b.Fatalf("%d orders after processing %d imports (%v)", l.Total, b.N, err)
	}
}

// BenchmarkOrderImportCommit measures the inbox commit alone (one write transaction per
// import, the single SQLite writer), to see whether the endpoint is bound by it: if commits
// run far faster than the endpoint accepts imports, grouping commits would not pay.
func BenchmarkOrderImportCommit(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	acme := e.accounts["acme"]
	var seq atomic.Int64
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := []byte(orderBody(fmt.Sprintf("C-%d", seq.Add(1))))
			if _, _, err := e.db.EnqueueImport(ctx, acme.ID, body, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commits/s")
}
