package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// bareHandler is the yardstick: a plain net/http handler that reads the body and answers a
// small JSON document. Benchmarks report waybill's requests/s beside it, measured in the same
// run, because these machines are shared and absolute figures are noise.
var bareHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"data":{"ok":true}}` + "\n"))
})

// benchVsBare measures h and bareHandler over a real loopback listener with 16 clients per CPU,
// each request built by newReq(baseURL, i), and reports req/s for both and their ratio.
// A request that h answers with a status other than want fails the benchmark.
func benchVsBare(b *testing.B, h http.Handler, want int, newReq func(base string, i int) *http.Request) {
	var rates [2]float64
	for k, c := range []struct {
		name string
		h    http.Handler
		want int
	}{{"bare", bareHandler, http.StatusOK}, {"waybill", h, want}} {
		b.Run(c.name, func(b *testing.B) {
			srv := httptest.NewServer(c.h)
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			var seq int64
			var mu = make(chan struct{}, 1)
			next := func() int {
				mu <- struct{}{}
				defer func() { <-mu }()
				seq++
				return int(seq)
			}
			// 16 clients per CPU, so concurrent writes can share commits as under real load.
			b.SetParallelism(16)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					res, err := client.Do(newReq(srv.URL, next()))
					if err != nil {
						b.Error(err)
						return
					}
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != c.want {
						b.Errorf("status %d; want %d", res.StatusCode, c.want)
						return
					}
				}
			})
			rates[k] = float64(b.N) / time.Since(start).Seconds()
			b.ReportMetric(rates[k], "req/s")
		})
	}
	if rates[0] > 0 {
		b.Logf("waybill %.0f req/s = %.2f × bare net/http (%.0f req/s)", rates[1], rates[1]/rates[0], rates[0])
	}
}
