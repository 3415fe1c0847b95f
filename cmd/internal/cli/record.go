package cli

import (
	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// recordJSON is a shipment's stored record as `waybill inspect shipment` and `waybill export
// shipments` print it: what was asked, every quote in cents, who gave no quote, the label
// bought and its tracking events.
type recordJSON struct {
	ID                   string            `json:"id"`
	AccountID            string            `json:"account_id"`
	OrderID              string            `json:"order_id,omitempty"`
	Status               string            `json:"status"`
	Brand                string            `json:"brand"`
	ShipDate             string            `json:"ship_date"`
	RateShoppingProfile  string            `json:"rate_shopping_profile"`
	RateShoppingStrategy string            `json:"rate_shopping_strategy"`
	LabelFormat          string            `json:"label_format"`
	CustomReference1     *string           `json:"custom_reference_1"`
	CustomReference2     *string           `json:"custom_reference_2"`
	Request              recordRequestJSON `json:"request"`
	Quotes               []recordQuoteJSON `json:"quotes"`
	// Messages is null for a shipment quoted before they were kept.
	Messages  []shipping.Reason        `json:"messages"`
	Label     *recordLabelJSON         `json:"label"`
	Events    []shipping.TrackingEvent `json:"events"`
	CreatedAt shipping.Timestamp       `json:"created_at"`
	UpdatedAt shipping.Timestamp       `json:"updated_at"`
}

// recordRequestJSON is what the shipment was created with; unlike the stored request, a
// missing customs declaration shows as null and an outbound shipment as is_return false.
type recordRequestJSON struct {
	Origin        shipping.Address      `json:"origin"`
	Destination   shipping.Address      `json:"destination"`
	ReturnAddress shipping.Address      `json:"return_address"`
	Parcel        shipping.Parcel       `json:"parcel"`
	CustomsInfo   *shipping.CustomsInfo `json:"customs_info"`
	IsReturn      bool                  `json:"is_return"`
}

// recordQuoteJSON is one quote, in cents.
type recordQuoteJSON struct {
	ID                    string                `json:"id"`
	Carrier               string                `json:"carrier"`
	Service               string                `json:"service"`
	Currency              string                `json:"currency"`
	PostageCents          int64                 `json:"postage_cents"`
	SurchargesCents       int64                 `json:"surcharges_cents"`
	TotalCents            int64                 `json:"total_cents"`
	RetailCents           int64                 `json:"retail_cents"`
	EstimatedDeliveryDate shipping.Timestamp    `json:"estimated_delivery_date"`
	EstimatedDeliveryDays int                   `json:"estimated_delivery_days"`
	RateMetadata          shipping.RateMetadata `json:"rate_metadata"`
}

// recordLabelJSON is the label bought, with the money and dates the API does not show.
type recordLabelJSON struct {
	ID                 string              `json:"id"`
	Status             string              `json:"status"`
	Substatus          *string             `json:"substatus"`
	TrackingCode       string              `json:"tracking_code"`
	Carrier            string              `json:"carrier"`
	Service            string              `json:"service"`
	ShippingRateID     string              `json:"shipping_rate_id"`
	InsuredCents       int64               `json:"insured_cents"`
	InsuranceCents     int64               `json:"insurance_cents"`
	ManifestID         *string             `json:"manifest_id"`
	FirstCarrierScanAt *shipping.Timestamp `json:"first_carrier_scan_at"`
	DeliveredAt        *shipping.Timestamp `json:"delivered_at"`
	CreatedAt          shipping.Timestamp  `json:"created_at"`
	UpdatedAt          shipping.Timestamp  `json:"updated_at"`
}

// recordView is the record as printed. The request, quotes and label are converted whole, so a
// field the store gains in one of them stops the build here until its output is decided.
func recordView(r *store.Record) recordJSON {
	v := recordJSON{ID: r.ID, AccountID: r.AccountID, OrderID: r.OrderID, Status: r.Status, Brand: r.Brand,
		ShipDate: r.ShipDate, RateShoppingProfile: r.RateShoppingProfile, RateShoppingStrategy: r.RateShoppingStrategy,
		LabelFormat: r.LabelFormat, CustomReference1: r.CustomReference1, CustomReference2: r.CustomReference2,
		Request: recordRequestJSON(r.Request), Quotes: make([]recordQuoteJSON, len(r.Quotes)),
		Messages: r.Messages, Events: r.Events, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	for i, q := range r.Quotes {
		v.Quotes[i] = recordQuoteJSON(q)
	}
	if l := r.Label; l != nil {
		lv := recordLabelJSON(*l)
		v.Label = &lv
	}
	return v
}

// differenceJSON is a difference as `waybill verify` prints it, one line each.
type differenceJSON struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Field string `json:"field"`
}
