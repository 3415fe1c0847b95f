package manifest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/webhook"
)

// dayStore is a CloseOutStore over fixed candidates whose StoreManifest answers changed for its
// first calls, then records what it is handed.
type dayStore struct {
	candidates []*shipping.Shipment
	changed    int
	reads      int
	stored     []Closed
}

func (st *dayStore) CloseOutCandidates(ctx context.Context, accountID, carrier, shipDate string) ([]*shipping.Shipment, error) {
	st.reads++
	return st.candidates, nil
}

func (st *dayStore) AccountName(ctx context.Context, accountID string) (string, error) {
	return "Acme", nil
}
func (st *dayStore) AccountBrand(ctx context.Context, accountID string) (string, error) {
	return "", nil
}

func (st *dayStore) StoreManifest(ctx context.Context, d Closed) error {
	if st.changed > 0 {
		st.changed--
		return ErrDayChanged
	}
	st.stored = append(st.stored, d)
	return nil
}

// TestCloser: the close-out takes the candidates that Qualify (a store that reads too much
// collects nothing more), puts their labels in the manifest without touching what it read,
// builds MANIFEST_CREATED with the links, decides again when the day changed, and gives up
// after maxCloseAttempts.
func TestCloser(t *testing.T) {
	now := time.Date(2026, 11, 22, 17, 30, 0, 123456789, time.UTC)
	candidate := func(id, carrier, shipDate string, isReturn bool) *shipping.Shipment {
		s := shipment(shipping.StatusPurchased, shipDate)
		s.ID, s.IsReturn = id, isReturn
		s.ShippingLabel = &shipping.Label{ID: "l" + id, Carrier: carrier, Status: shipping.LabelPreTransit}
		return s
	}
	st := &dayStore{changed: 2, candidates: []*shipping.Shipment{candidate("1", "ACME", "2026-11-22", false),
		candidate("2", "ZED", "2026-11-22", false), candidate("3", "ACME", "2026-11-22", true),
		candidate("4", "ACME", "2026-11-23", false), candidate("5", "ACME", "2026-11-22", false)}}
	c := &Closer{Store: st, NewID: func() string { return "m1" }, Now: func() time.Time { return now },
		Links: func(id string) (string, string) { return "https://x/" + id + ".pdf", "https://x/" + id + ".csv" }}
	v, err := c.Close(context.Background(), "a1", "ACME", "2026-11-22")
	if err != nil {
		t.Fatal(err)
	}
	if st.reads != 3 || len(st.stored) != 1 {
		t.Fatalf("%d reads, %d stored; want 3 reads (two changed days) and one manifest", st.reads, len(st.stored))
	}
	d := st.stored[0]
	if !slices.Equal(v.ShippingLabelIDs, []string{"l1", "l5"}) || v.LabelCount != 2 || v.PDFURL != "" || d.View.ID != "m1" {
		t.Errorf("manifest %+v; want labels l1, l5 and no URLs as stored", v)
	}
	if want := now.Truncate(time.Microsecond); !v.CreatedAt.Equal(want) {
		t.Errorf("created_at %v; want %v (the store's microseconds)", v.CreatedAt, want)
	}
	for i, s := range d.Collected {
		if l := s.ShippingLabel; l.ManifestID == nil || *l.ManifestID != "m1" || d.Read[i].ShippingLabel.ManifestID != nil {
			t.Errorf("label %s: collected in %v, read in %v; want m1 and the read copy untouched", l.ID, l.ManifestID,
				d.Read[i].ShippingLabel.ManifestID)
		}
	}
	var event View
	if err := json.Unmarshal(d.Payload, &event); err != nil || d.Topic != webhook.TopicManifestCreated ||
		event.PDFURL != "https://x/m1.pdf" || event.CSVURL != "https://x/m1.csv" || event.ID != "m1" {
		t.Errorf("event %s %s (%v); want MANIFEST_CREATED with the links", d.Topic, d.Payload, err)
	}
	if len(d.PDF) == 0 || len(d.CSV) == 0 {
		t.Error("the documents are not drawn")
	}

	st = &dayStore{changed: maxCloseAttempts, candidates: st.candidates}
	c.Store = st
	if _, err := c.Close(context.Background(), "a1", "ACME", "2026-11-22"); !errors.Is(err, ErrDayChanged) || st.reads != maxCloseAttempts {
		t.Errorf("a day that keeps changing: %v after %d reads; want ErrDayChanged after %d", err, st.reads, maxCloseAttempts)
	}
	if _, err := c.Close(context.Background(), "a1", "POSTLINE", "2026-11-22"); !errors.Is(err, ErrNothingToManifest) {
		t.Errorf("a carrier without labels: %v; want ErrNothingToManifest", err)
	}
}
