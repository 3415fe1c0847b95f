package migrate

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Frozen copies of the JSON shapes the steps read and write: a shipment's request, a quote as a
// shipment's rendering showed it, its rate metadata, a message. Each holds what the steps need
// of the running service's types as they were when the steps were written, with the same JSON
// names; they must never change with the runtime's.

// money is an amount in a currency.
type money struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// request is what a shipment's stored request holds that the steps read. Its addresses and
// parcel are read as JSON objects only: a request that is not one is refused, as the store did.
type request struct {
	Origin        place            `json:"origin"`
	Destination   place            `json:"destination"`
	ReturnAddress map[string]any   `json:"return_address"`
	Parcel        map[string]any   `json:"parcel"`
	CustomsInfo   *json.RawMessage `json:"customs_info"`
	IsReturn      bool             `json:"is_return"`
}

// place is what the steps read of an address.
type place struct {
	Country string `json:"country"`
}

// hasCustomsDocuments is whether the shipment's label comes with customs documents (a
// commercial invoice among them): it goes between two countries with a declaration.
func (r *request) hasCustomsDocuments() bool {
	return r.Origin.Country != r.Destination.Country && r.CustomsInfo != nil
}

// readRequest reads a stored request.
func readRequest(b []byte) (*request, error) {
	r := new(request)
	if err := json.Unmarshal(b, r); err != nil {
		return nil, err
	}
	return r, nil
}

// reason is a shipment's message: why a carrier or service gave no rate.
type reason struct {
	Carrier string `json:"carrier"`
	Service string `json:"service,omitempty"`
	Message string `json:"message"`
}

// rateMetadata is a quote's rate metadata, with the real product's field names.
type rateMetadata struct {
	USPSZone           int                 `json:"usps_zone,omitempty"`
	CountryZone        int                 `json:"country_zone,omitempty"`
	BillableWeight     int64               `json:"billable_weight"`
	WeightMetadata     weightMetadata      `json:"weight_metadata"`
	SurchargesMetadata []surchargeMetadata `json:"surcharges_metadata"`
	CarrierVersion     int64               `json:"carrier_version,omitempty"`
	DDPFee             *money              `json:"ddp_fee,omitempty"`
}

type weightMetadata struct {
	ActualOzWeight   float64 `json:"actual_oz_weight"`
	BillableOzWeight int64   `json:"billable_oz_weight"`
	DimFactor        int     `json:"dim_factor"`
	DimThreshold     int     `json:"dim_threshold"`
	Volume           float64 `json:"volume"`
}

type surchargeMetadata struct {
	SurchargeType string `json:"surcharge_type"`
	Surcharge     money  `json:"surcharge"`
}

// Dimensional weight's constants as the older rate metadata implied them: it kept only the
// billable weight, priced at these.
const (
	olderDimFactor    = 166
	olderDimThreshold = 1728
)

// olderRateMetadata is the shape rate metadata was written in before the real product's field
// names were adopted ({"zone","billable_weight_oz","surcharges":[{"type","amount"}]}), beside
// today's names, which a value of today's shape has.
type olderRateMetadata struct {
	rateMetadata
	Zone             *int  `json:"zone"`
	BillableWeightOz int64 `json:"billable_weight_oz"`
	Surcharges       []struct {
		Type   string  `json:"type"`
		Amount float64 `json:"amount"`
	} `json:"surcharges"`
}

// readRateMetadata reads a rate metadata value of either shape; older reports whether it was
// of the older one.
func readRateMetadata(s string) (m rateMetadata, older bool, err error) {
	var stored olderRateMetadata
	if err := json.Unmarshal([]byte(s), &stored); err != nil {
		return m, false, err
	}
	m = stored.rateMetadata
	if stored.Zone != nil && m.USPSZone == 0 {
		// The earlier shape knew neither the actual weight nor the volume; they stay 0.
		older = true
		m = rateMetadata{USPSZone: *stored.Zone, BillableWeight: stored.BillableWeightOz,
			WeightMetadata: weightMetadata{BillableOzWeight: stored.BillableWeightOz,
				DimFactor: olderDimFactor, DimThreshold: olderDimThreshold}}
		for _, sc := range stored.Surcharges {
			m.SurchargesMetadata = append(m.SurchargesMetadata, surchargeMetadata{SurchargeType: sc.Type,
				Surcharge: money{Amount: sc.Amount, Currency: "USD"}})
		}
	}
	if m.SurchargesMetadata == nil {
		m.SurchargesMetadata = []surchargeMetadata{}
	}
	return m, older, nil
}

// quote is one of a shipment's quotes: as its rendering showed it, and its cents.
type quote struct {
	ID                    string       `json:"id"`
	ShipmentID            string       `json:"shipment_id"`
	Carrier               string       `json:"carrier"`
	Service               string       `json:"service"`
	Price                 money        `json:"price"`
	EstimatedDeliveryDate time.Time    `json:"estimated_delivery_date"`
	EstimatedDeliveryDays int          `json:"estimated_delivery_days"`
	RateMetadata          rateMetadata `json:"rate_metadata"`

	PostageCents, SurchargesCents, TotalCents, RetailCents int64 `json:"-"`
}

// wholeCents is m in cents, if it is a whole number of cents of currency.
func wholeCents(m money, currency string) (int64, error) {
	cents := int64(math.Round(m.Amount * 100))
	if m != (money{Amount: float64(cents) / 100, Currency: currency}) {
		return 0, fmt.Errorf("%v is not in whole cents of %s", m, currency)
	}
	return cents, nil
}

// encodeSurcharges is the surcharges column of a quote in currency: a JSON object of each
// surcharge's cents by its type, in the quote's order ({"FUEL":19,"DAS":300}).
func encodeSurcharges(ss []surchargeMetadata, currency string) (string, error) {
	b := []byte{'{'}
	for i, s := range ss {
		cents, err := wholeCents(s.Surcharge, currency)
		if err != nil {
			return "", fmt.Errorf("surcharge %s: %w", s.SurchargeType, err)
		}
		typ, err := json.Marshal(s.SurchargeType)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(append(b, typ...), ':'), cents, 10)
	}
	return string(append(b, '}')), nil
}
