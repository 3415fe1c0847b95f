package manifest

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/webhook"
)

// CloseOutStore is what closing out a day reads and writes.
type CloseOutStore interface {
	// CloseOutCandidates reads the account's shipments whose label Qualifies for a manifest of
	// carrier and shipDate, with their quotes and labels.
	CloseOutCandidates(ctx context.Context, accountID, carrier, shipDate string) ([]*shipping.Shipment, error)
	// AccountName and AccountBrand are the account's name and brand.
	AccountName(ctx context.Context, accountID string) (string, error)
	AccountBrand(ctx context.Context, accountID string) (string, error)
	// StoreManifest writes a closed-out day in one transaction: its manifest and documents,
	// its labels put in the manifest, its shipments' stored copies and its event. Unless every
	// label and shipment is still as the close-out read it, and every label still Qualifies,
	// it writes nothing and answers ErrDayChanged.
	StoreManifest(ctx context.Context, d Closed) error
}

// ErrDayChanged reports that a label or shipment of a close-out changed between the read and
// the write (a void, a scan, a tracking event, another close-out): the close-out is decided
// again from what the day is now.
var ErrDayChanged = errors.New("the day's labels changed during the close-out")

// Closed is a closed-out day, decided and drawn, as the store writes it.
type Closed struct {
	AccountID string
	View      View // the manifest as stored (its URLs empty)
	PDF, CSV  []byte
	// Read are the collected shipments as the close-out read them; Collected are the same
	// with their labels in the manifest, as they are stored.
	Read, Collected []*shipping.Shipment
	// Topic and Payload are the event the close-out emits: MANIFEST_CREATED with the manifest
	// as the API answers it, its URLs set.
	Topic   string
	Payload json.RawMessage
}

// Closer closes out an account's day with one carrier.
type Closer struct {
	Store CloseOutStore
	NewID func() string
	Now   func() time.Time
	// Links gives the URLs of a manifest's PDF and CSV, which its event carries.
	Links func(id string) (pdfURL, csvURL string)
}

// maxCloseAttempts bounds how often one close-out decides again: each time, another change to
// the day's labels committed between its read and its write.
const maxCloseAttempts = 8

// Close closes out the account's day with carrier: every label that Qualifies goes into one new
// manifest, whose PDF and CSV are drawn before anything is written and stored with it. No
// qualifying label is ErrNothingToManifest. Two close-outs never share a label: the store
// writes only if the day is still as it was read, and the close-out is otherwise decided again.
// It returns the manifest as stored.
func (c *Closer) Close(ctx context.Context, accountID, carrier, shipDate string) (View, error) {
	for attempt := 1; ; attempt++ {
		d, err := c.closeDay(ctx, accountID, carrier, shipDate)
		if err != nil {
			return View{}, err
		}
		err = c.Store.StoreManifest(ctx, d)
		if err == nil {
			return d.View, nil
		}
		if !errors.Is(err, ErrDayChanged) || attempt == maxCloseAttempts {
			return View{}, err
		}
	}
}

// closeDay reads the day, takes the labels that Qualify, and builds the manifest, its
// documents and its event.
func (c *Closer) closeDay(ctx context.Context, accountID, carrier, shipDate string) (Closed, error) {
	candidates, err := c.Store.CloseOutCandidates(ctx, accountID, carrier, shipDate)
	if err != nil {
		return Closed{}, err
	}
	d := Closed{AccountID: accountID, Topic: webhook.TopicManifestCreated}
	for _, s := range candidates {
		if Qualifies(s, s.ShippingLabel, carrier, shipDate) {
			d.Read = append(d.Read, s)
		}
	}
	if len(d.Read) == 0 {
		return Closed{}, ErrNothingToManifest
	}
	name, err := c.Store.AccountName(ctx, accountID)
	if err != nil {
		return Closed{}, err
	}
	brand, err := c.Store.AccountBrand(ctx, accountID)
	if err != nil {
		return Closed{}, err
	}
	// Stored timestamps keep microseconds: the documents show what the store keeps.
	now := time.UnixMicro(c.Now().UnixMicro()).UTC()
	m := Manifest{ID: c.NewID(), Carrier: carrier, ShipDate: shipDate, CreatedAt: now, Shipper: ShipperFor(name, brand, d.Read)}
	d.View = View{ID: m.ID, Carrier: carrier, ShipDate: shipDate, Status: StatusCreated, LabelCount: len(d.Read),
		CreatedAt: shipping.Timestamp{Time: now}}
	for _, s := range d.Read {
		m.Lines = append(m.Lines, LineFor(s, s.ShippingLabel))
		d.View.ShippingLabelIDs = append(d.View.ShippingLabelIDs, s.ShippingLabel.ID)
		d.Collected = append(d.Collected, collected(s, m.ID, now))
	}
	d.PDF, d.CSV = PDF(m), CSV(m)
	event := d.View
	event.PDFURL, event.CSVURL = c.Links(m.ID)
	d.Payload, err = json.Marshal(event)
	return d, err
}

// collected is s with its label in manifest id since now.
func collected(s *shipping.Shipment, id string, now time.Time) *shipping.Shipment {
	cs, l := *s, *s.ShippingLabel
	l.ManifestID, l.UpdatedAt = &id, shipping.Timestamp{Time: now}
	cs.ShippingLabel = &l
	return &cs
}
