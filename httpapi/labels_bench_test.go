package httpapi

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/waybill/waybill/shipping"
)

// shipmentPool hands out OPEN shipments to buy, cloning a template straight into the store
// so that making them is not part of what a buy benchmark measures.
type shipmentPool struct {
	e        *testEnv
	template *shipping.Shipment

	mu    sync.Mutex
	ready []*shipping.Shipment
}

func newShipmentPool(b *testing.B, e *testEnv, n int) *shipmentPool {
	w := e.do("POST", "/shipments", "all", shipmentBody("CHEAPEST", "PDF"))
	s := decode[shipmentAnswer](b, w, http.StatusCreated)
	tmpl, err := e.db.Shipment(context.Background(), e.accounts["acme"].ID, s.Data.ID)
	if err != nil {
		b.Fatal(err)
	}
	p := &shipmentPool{e: e, template: tmpl}
	for range n {
		p.ready = append(p.ready, p.clone(b))
	}
	return p
}

func (p *shipmentPool) clone(tb testing.TB) *shipping.Shipment {
	s := *p.template
	s.ID = p.e.db.NewID()
	s.ShippingRates = append([]shipping.Rate(nil), p.template.ShippingRates...)
	for i := range s.ShippingRates {
		s.ShippingRates[i].ID, s.ShippingRates[i].ShipmentID = p.e.db.NewID(), s.ID
	}
	if _, err := p.e.db.CreateShipment(context.Background(), &s); err != nil {
		tb.Fatal(err)
	}
	return &s
}

// next returns an OPEN shipment, making one if the pool ran dry.
func (p *shipmentPool) next(tb testing.TB) *shipping.Shipment {
	p.mu.Lock()
	if n := len(p.ready); n > 0 {
		s := p.ready[n-1]
		p.ready = p.ready[:n-1]
		p.mu.Unlock()
		return s
	}
	p.mu.Unlock()
	return p.clone(tb)
}

// BenchmarkBuy measures POST /shipments/{id}/rates/{rate_id} beside a bare net/http handler.
// Each request buys a fresh OPEN shipment: the handler below swaps the placeholder path for the
// next shipment of the pool (a mutex and a slice pop) before the API serves it.
func BenchmarkBuy(b *testing.B) {
	e := newEnv(b)
	pool := newShipmentPool(b, e, 3000)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/buy" {
			s := pool.next(b)
			r.URL.Path = "/shipments/" + s.ID + "/rates/" + s.ShippingRates[0].ID
		}
		e.api.ServeHTTP(w, r)
	})
	token := e.tokens["all"]
	benchVsBare(b, h, http.StatusOK, func(base string, i int) *http.Request {
		r, _ := http.NewRequest("POST", base+"/buy", strings.NewReader(`{"inline_label": false}`))
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Content-Type", "application/json")
		return r
	})
}
