package store

import (
	"context"

	"github.com/waybill/waybill/shipping"
)

// codeCarrier is a carrier that sells every label under its code and voids anything.
type codeCarrier string

func (c codeCarrier) Name() string { return "TEST" }
func (c codeCarrier) Rates(context.Context, shipping.RateRequest) ([]shipping.Quote, error) {
	return nil, nil
}
func (c codeCarrier) Purchase(context.Context, shipping.PurchaseRequest) (string, error) {
	return string(c), nil
}
func (c codeCarrier) Void(context.Context, string) error { return nil }

// buyAs buys rateID for the shipment through the use case, the carrier selling code.
func buyAs(ctx context.Context, db *DB, accountID, shipmentID, rateID, code string) error {
	b := &shipping.Buyer{Store: db, Serials: db.Serials(), Now: db.Now,
		Carrier: func(context.Context, string) (shipping.Carrier, bool, error) { return codeCarrier(code), true, nil }}
	_, err := b.Buy(ctx, shipping.BuyRequest{AccountID: accountID, ShipmentID: shipmentID, RateID: rateID})
	return err
}
