package shipping_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/shipping/rating"
)

// courier is a host application's own carrier: a flat price per zone, next-day delivery.
type courier struct{}

func (courier) Name() string { return "COURIER" }

func (courier) Rates(ctx context.Context, req shipping.RateRequest) ([]shipping.Quote, error) {
	if req.Zone > 2 {
		return nil, errors.New("delivers within 150 miles only")
	}
	price := int64(900 + 100*req.Zone)
	return []shipping.Quote{{Service: "SAME_DAY", PostageCents: price, RetailCents: price, TransitDays: 1, Zone: req.Zone,
		BillableWeightOz: shipping.BillableWeightOz(req.LengthIn, req.WidthIn, req.HeightIn, req.WeightOz, shipping.DimFactor)}}, nil
}

func (courier) Purchase(ctx context.Context, req shipping.PurchaseRequest) (string, error) {
	return "CR-" + req.LabelID, nil
}

func (courier) Void(ctx context.Context, trackingCode string) error { return nil }

// A host plugs its own carrier in beside the stored ones (httpapi.Config.Carriers) and names
// it in a rate shopping profile.
func ExampleCarrier() {
	carriers := append(carrier.SampleCarriers(), courier{})
	shopper := rating.NewShopper(carriers...)
	profile := rating.LoadProfile("local", rating.ProfileInput{Name: "Local", Carriers: []string{"COURIER", "POSTLINE"}}, time.Time{})

	req := &shipping.ShipmentRequest{
		Origin:               &shipping.Address{Name: "Shop", Street1: "1 Main St", City: "New York", State: "NY", Zip: "10001", Country: "US"},
		Destination:          &shipping.Address{Name: "Jane", Street1: "2 Elm St", City: "Newark", State: "NJ", Zip: "07102", Country: "US"},
		Parcel:               &shipping.Parcel{Length: 6, Width: 4, Height: 2, LengthUnit: "IN", Weight: 12, WeightUnit: "OZ"},
		RateShoppingStrategy: shipping.StrategyAll,
	}
	shipDate, err := req.Validate(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	if err != nil {
		panic(err)
	}
	rates, _, err := shopper.Shop(context.Background(), profile, req, shipDate)
	if err != nil {
		panic(err)
	}
	for _, r := range rates {
		fmt.Printf("%s %s $%.2f zone %d, %d day(s)\n", r.Carrier, r.Service, r.Price.Amount, r.RateMetadata.USPSZone, r.EstimatedDeliveryDays)
	}
	// Output:
	// POSTLINE GROUND_ADVANTAGE $5.01 zone 1, 2 day(s)
	// POSTLINE PRIORITY $9.39 zone 1, 1 day(s)
	// COURIER SAME_DAY $10.00 zone 1, 1 day(s)
}
