package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/waybill/waybill/webhook"
)

// BenchmarkWebhookDelivery reports deliveries/s through the worker (claim with a lease, sign
// twice, POST, record the result) to a loopback receiver, beside a bare net/http client loop
// posting the same bodies to the same receiver with the same parallelism, in the same run.
func BenchmarkWebhookDelivery(b *testing.B) {
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
	}))
	defer recv.Close()
	payload := map[string]any{"shipment_id": "00000000-0000-7000-8000-000000000001", "tracking_code": "WB1234567890",
		"status": "IN_TRANSIT", "substatus": nil, "tracking_events": []any{}}
	var rates [2]float64

	b.Run("bare", func(b *testing.B) {
		body := webhook.Body(webhook.Event{ID: "00000000-0000-7000-8000-000000000002", SubscriptionID: "00000000-0000-7000-8000-000000000003",
			Topic: webhook.TopicLabelTrackingUpdated, Status: webhook.StatusPending, HappenedAt: testStart, Payload: []byte(`{"status":"IN_TRANSIT","tracking_code":"WB1234567890"}`)})
		client := webhook.NewClient(true, webhook.DefaultConcurrency)
		work := make(chan struct{})
		var wg sync.WaitGroup
		for range webhook.DefaultConcurrency {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range work {
					res, err := client.Post(recv.URL, "application/json", bytes.NewReader(body))
					if err != nil {
						b.Error(err)
						continue
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			}()
		}
		b.ResetTimer()
		start := time.Now()
		for range b.N {
			work <- struct{}{}
		}
		close(work)
		wg.Wait()
		rates[0] = float64(b.N) / time.Since(start).Seconds()
		b.ReportMetric(rates[0], "deliveries/s")
	})

	b.Run("worker", func(b *testing.B) {
		e := newEnv(b)
		e.subscribe("all", recv.URL, webhook.TopicLabelTrackingUpdated)
		for range b.N {
			e.emit("acme", webhook.TopicLabelTrackingUpdated, payload)
		}
		b.ResetTimer()
		start := time.Now()
		if err := e.api.webhooks.worker.Drain(context.Background()); err != nil {
			b.Fatal(err)
		}
		rates[1] = float64(b.N) / time.Since(start).Seconds()
		b.StopTimer()
		var delivered int
		e.sql.QueryRow(`SELECT COUNT(*) FROM webhook_events WHERE status = $1`, webhook.StatusDelivered).Scan(&delivered)
		if delivered != b.N {
			b.Fatalf("%d of %d events delivered", delivered, b.N)
		}
		b.ReportMetric(rates[1], "deliveries/s")
	})
	if rates[0] > 0 && rates[1] > 0 {
		b.Logf("worker %.0f deliveries/s = %.2f × bare net/http client loop (%.0f/s)", rates[1], rates[1]/rates[0], rates[0])
	}
}
