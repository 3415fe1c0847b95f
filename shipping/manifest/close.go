package manifest

import (
	"context"
	"time"

	"github.com/waybill/waybill/shipping"
)

// Day is an account's day with one carrier, held in one transaction for its close-out
// (CloseOutStore.CloseOut).
type Day interface {
	// Shipments are the account's bought shipments of the carrier and ship date that are not
	// returns, with their labels, locked with them.
	Shipments() []*shipping.Shipment
	// Shipper is the account's name and brand.
	Shipper() (name, brand string)
	// NewID and Now are the store's ID source and clock.
	NewID() string
	Now() time.Time
	// Store stores m with its documents, claims the labels of collected for it (an error, which
	// rolls the close-out back, when another change took one), renders their shipments again and
	// emits MANIFEST_CREATED.
	Store(ctx context.Context, m Manifest, collected []*shipping.Shipment, pdf, csv []byte) error
}

// CloseOutStore is what closing out a day needs persisted.
type CloseOutStore interface {
	// CloseOut runs fn in one transaction on the account's day with carrier.
	CloseOut(ctx context.Context, accountID, carrier, shipDate string, fn func(Day) error) error
}

// Close closes out the account's day with carrier: in one transaction, every label that
// Qualifies goes into one new manifest, whose PDF and CSV are drawn and stored with it. No
// qualifying label is ErrNothingToManifest. Two close-outs never share a label. It returns the
// manifest and the shipments of its labels.
func Close(ctx context.Context, st CloseOutStore, accountID, carrier, shipDate string) (Manifest, []*shipping.Shipment, error) {
	var m Manifest
	var collected []*shipping.Shipment
	err := st.CloseOut(ctx, accountID, carrier, shipDate, func(d Day) error {
		collected = nil
		for _, s := range d.Shipments() {
			if Qualifies(s, s.ShippingLabel, carrier, shipDate) {
				collected = append(collected, s)
			}
		}
		if len(collected) == 0 {
			return ErrNothingToManifest
		}
		name, brand := d.Shipper()
		m = Manifest{ID: d.NewID(), Carrier: carrier, ShipDate: shipDate, CreatedAt: d.Now(),
			Shipper: ShipperFor(name, brand, collected)}
		for _, s := range collected {
			m.Lines = append(m.Lines, LineFor(s, s.ShippingLabel))
		}
		return d.Store(ctx, m, collected, PDF(m), CSV(m))
	})
	return m, collected, err
}
