package httpapi

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"
)

const propertyShipment = `{"origin": {"name": "Acme Warehouse", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
 "destination": {"name": "Jane Doe", "street1": "5 Broadway", "city": "New York", "state": "NY", "zip": "10001", "country": "US"},
 "parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": %d, "weight_unit": "OZ"},
 "rate_shopping_strategy": "CHEAPEST"}`

// TestBillingThroughTheAPI drives the real endpoints with random sequences — labels bought,
// cancelled (voided), moved through the tracking feed with duplicate and out-of-order events,
// fees and credits added and soft-deleted, the clock moved and the closer run — and checks after
// every step that each invoice's total is the sum of its live line items as listed, and that
// every finished label is billed exactly once and a voided one never.
func TestBillingThroughTheAPI(t *testing.T) {
	seeds := []uint64{7, 11, 2026}
	steps := 80
	if testing.Short() {
		seeds, steps = seeds[:1], 40
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			e := newEnv(t)
			runBillingProperty(t, e, rand.New(rand.NewPCG(seed, 1)), steps)
		})
	}
}

type propLabel struct {
	shipmentID, tracking string
	voided               bool
	finished             bool // billed once seen billed
	purchased, lastEvent time.Time
}

func runBillingProperty(t *testing.T, e *testEnv, rnd *rand.Rand, steps int) {
	var labels []*propLabel
	liveFees := map[string]bool{}
	var fees []string // every fee added, in order
	clock := testStart
	for step := 0; step < steps; step++ {
		switch op := rnd.IntN(12); {
		case op < 3: // buy a label
			type shipmentAnswer struct {
				Data struct {
					ID            string `json:"id"`
					ShippingRates []struct {
						ID string `json:"id"`
					} `json:"shipping_rates"`
					ShippingLabel struct {
						TrackingCode string `json:"tracking_code"`
					} `json:"shipping_label"`
				} `json:"data"`
			}
			s := decode[shipmentAnswer](t, e.do("POST", "/shipments", "all", fmt.Sprintf(propertyShipment, 1+rnd.IntN(60))), http.StatusCreated)
			rate := s.Data.ShippingRates[0]
			bought := decode[shipmentAnswer](t, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+rate.ID, "all", nil), http.StatusOK)
			labels = append(labels, &propLabel{shipmentID: s.Data.ID, tracking: bought.Data.ShippingLabel.TrackingCode,
				purchased: clock, lastEvent: clock})
		case op < 4: // cancel one (voids it while PRE_TRANSIT; 422 once in transit)
			if len(labels) == 0 {
				continue
			}
			l := labels[rnd.IntN(len(labels))]
			w := e.do("PUT", "/shipments/"+l.shipmentID+"/cancel", "all", nil)
			switch w.Code {
			case http.StatusOK:
				l.voided = true
			case http.StatusUnprocessableEntity:
			default:
				t.Fatalf("step %d: cancel = %d %s", step, w.Code, w.Body)
			}
		case op < 7: // a tracking event, sometimes a duplicate or out of order
			if len(labels) == 0 {
				continue
			}
			l := labels[rnd.IntN(len(labels))]
			status := []string{"IN_TRANSIT", "OUT_FOR_DELIVERY", "DELIVERED", "RETURN_TO_SENDER"}[rnd.IntN(4)]
			at := l.lastEvent.Add(time.Duration(rnd.IntN(120)-20) * time.Minute)
			if at.After(clock) {
				at = clock
			}
			if at.Before(l.purchased) {
				at = l.purchased // an event dated before the purchase is refused (400)
			}
			body := fmt.Sprintf(`{"tracking_code": %q, "status": %q, "message": "scan", "occurred_at": %q}`, l.tracking, status, at.Format(time.RFC3339Nano))
			w := e.do("POST", "/admin/tracking_events", "admin", body)
			if w.Code != http.StatusCreated && w.Code != http.StatusOK && w.Code != http.StatusUnprocessableEntity {
				t.Fatalf("step %d: tracking event = %d %s", step, w.Code, w.Body)
			}
			if at.After(l.lastEvent) {
				l.lastEvent = at
			}
		case op < 9: // a fee or a credit on the current DRAFT
			w := e.do("POST", "/admin/billing/invoices", "admin", map[string]string{"account_id": e.accounts["acme"].ID})
			want := http.StatusOK
			if w.Code == http.StatusCreated {
				want = http.StatusCreated
			}
			inv := decode[invoiceAnswer](t, w, want)
			amount := rnd.IntN(5000) - 1000
			if amount == 0 {
				amount = 7
			}
			it := decode[struct {
				Data lineItemAnswer `json:"data"`
			}](t, e.do("POST", "/admin/billing/invoices/"+inv.Data.ID+"/line_items", "admin", fmt.Sprintf(`{"description": "fee", "amount_cents": %d}`, amount)), http.StatusCreated)
			liveFees[it.Data.ID] = true
			fees = append(fees, it.Data.ID)
		case op < 10: // soft-delete a fee
			if len(fees) == 0 {
				continue
			}
			id := fees[rnd.IntN(len(fees))]
			switch w := e.do("DELETE", "/admin/billing/line_items/"+id, "admin", nil); w.Code {
			case http.StatusNoContent:
				if !liveFees[id] {
					t.Fatalf("step %d: deleting a deleted line item answered 204", step)
				}
				delete(liveFees, id)
			case http.StatusNotFound: // deleted already
				if liveFees[id] {
					t.Fatalf("step %d: deleting a live line item answered 404", step)
				}
			case http.StatusUnprocessableEntity: // its invoice was finalized
			default:
				t.Fatalf("step %d: DELETE line item = %d %s", step, w.Code, w.Body)
			}
		default: // time passes and the closer runs
			clock = clock.Add(time.Duration(rnd.IntN(72)) * time.Hour)
			e.setClock(clock)
			e.drain()
		}
		checkBillingProperty(t, e, step, labels)
	}
	var billed, voided int
	for _, l := range labels {
		if l.finished {
			billed++
		}
		if l.voided {
			voided++
		}
	}
	t.Logf("%d labels: %d billed, %d voided; %d fees live", len(labels), billed, voided, len(liveFees))
}

// checkBillingProperty lists every invoice and every line item through the API.
func checkBillingProperty(t *testing.T, e *testEnv, step int, labels []*propLabel) {
	t.Helper()
	invs := decode[struct {
		Data []struct {
			ID         string `json:"id"`
			Number     string `json:"invoice_number"`
			TotalCents int64  `json:"total_cents"`
		} `json:"data"`
	}](t, e.do("GET", "/billing/invoices?page_size=250", "read_billing", nil), http.StatusOK)
	billed := map[string]int{}
	for _, inv := range invs.Data {
		var sum int64
		for page := 1; ; page++ {
			l := decode[struct {
				Data []struct {
					TrackingCode        *string `json:"tracking_code"`
					TotalCents          int64   `json:"total_cents"`
					Type                string  `json:"type"`
					ShippingLabelStatus *string `json:"shipping_label_status"`
				} `json:"data"`
				Metadata metadata `json:"metadata"`
			}](t, e.do("GET", fmt.Sprintf("/billing/invoices/%s/line_items?page=%d&page_size=250", inv.ID, page), "read_billing", nil), http.StatusOK)
			for _, it := range l.Data {
				sum += it.TotalCents
				if it.Type == "POSTAGE" {
					billed[*it.TrackingCode]++
					if s := *it.ShippingLabelStatus; s != "DELIVERED" && s != "RETURN_TO_SENDER" {
						t.Fatalf("step %d: POSTAGE item with label status %s", step, s)
					}
				}
			}
			if !l.Metadata.HasNextPage {
				break
			}
		}
		if sum != inv.TotalCents {
			t.Fatalf("step %d: invoice %s total %d; its live line items sum to %d", step, inv.Number, inv.TotalCents, sum)
		}
	}
	for _, l := range labels {
		ls := decode[struct {
			Data []struct {
				Status string `json:"status"`
			} `json:"data"`
		}](t, e.do("GET", "/shipping_labels?tracking_code="+l.tracking, "all", nil), http.StatusOK)
		if len(ls.Data) != 1 {
			t.Fatalf("step %d: label %s listed %d times", step, l.tracking, len(ls.Data))
		}
		status := ls.Data[0].Status
		n := billed[l.tracking]
		switch {
		case n > 1:
			t.Fatalf("step %d: label %s billed %d times", step, l.tracking, n)
		case l.voided && n != 0:
			t.Fatalf("step %d: voided label %s billed", step, l.tracking)
		case (status == "DELIVERED" || status == "RETURN_TO_SENDER") && n != 1:
			t.Fatalf("step %d: label %s is %s but billed %d times; want once", step, l.tracking, status, n)
		case l.finished && n != 1:
			// Once billed, a label stays billed whatever later events say.
			t.Fatalf("step %d: label %s was billed, now billed %d times", step, l.tracking, n)
		}
		l.finished = n == 1
	}
}
