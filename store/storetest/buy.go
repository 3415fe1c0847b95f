package storetest

import (
	"context"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/manifest"
	"github.com/waybill/waybill/store"
)

// purchaseFunc is a test carrier's purchase: the shipment (its ID and ship date), the rate
// (its service), the label's ID and the serials.
type purchaseFunc func(ctx context.Context, s *shipping.Shipment, r shipping.Rate, labelID string, serials shipping.SerialSource) (string, error)

// funcCarrier is a carrier that buys with a purchaseFunc and voids anything.
type funcCarrier struct{ buy purchaseFunc }

func (c funcCarrier) Name() string { return "TEST" }
func (c funcCarrier) Rates(context.Context, shipping.RateRequest) ([]shipping.Quote, error) {
	return nil, nil
}
func (c funcCarrier) Purchase(ctx context.Context, req shipping.PurchaseRequest) (string, error) {
	return c.buy(ctx, &shipping.Shipment{ID: req.ShipmentID, ShipDate: req.ShipDate}, shipping.Rate{Service: req.Service},
		req.LabelID, req.Serials)
}
func (c funcCarrier) Void(context.Context, string) error { return nil }

// buyer is the use case that buys and voids labels over db, with every carrier buying with buy.
func buyer(db *store.DB, buy purchaseFunc) *shipping.Buyer {
	return &shipping.Buyer{Store: db, Serials: db.Serials(), Now: db.Now,
		Carrier: func(context.Context, string) (shipping.Carrier, bool, error) { return funcCarrier{buy}, true, nil }}
}

// buyLabel buys rateID for the shipment through the use case, the carrier buying with buy.
func buyLabel(ctx context.Context, db *store.DB, accountID, shipmentID, rateID string, buy purchaseFunc) (*shipping.Shipment, string, error) {
	b, err := buyer(db, buy).Buy(ctx, shipping.BuyRequest{AccountID: accountID, ShipmentID: shipmentID, RateID: rateID})
	return b.Shipment, b.Rendered, err
}

// cancelShipment cancels the shipment through the use case; voids succeed.
func cancelShipment(ctx context.Context, db *store.DB, accountID, shipmentID string) (*shipping.Shipment, error) {
	return buyer(db, nil).CancelShipment(ctx, accountID, shipmentID)
}

// createManifest closes out the account's day with carrier through the use case.
func createManifest(ctx context.Context, db *store.DB, accountID, carrier, shipDate string) (manifest.View, error) {
	return closer(db).Close(ctx, accountID, carrier, shipDate)
}

// closer is the close-out use case on db, its event without URLs.
func closer(db *store.DB) *manifest.Closer {
	return &manifest.Closer{Store: db, NewID: db.NewID, Now: db.Now, Links: func(string) (string, string) { return "", "" }}
}
