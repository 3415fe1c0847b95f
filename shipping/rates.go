package shipping

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// RateRequest is a parcel on a route to be quoted. The rate engine fills in the zone, the
// transit-days override and the destination's surcharge designation from the profile, so a
// carrier only prices.
type RateRequest struct {
	Origin      Address
	Destination Address
	// Parcel in inches and ounces.
	LengthIn, WidthIn, HeightIn float64
	WeightOz                    float64
	// Zone is the zone (1 to 8) from the zone origin to the destination: the profile's for
	// the route (ZoneFromProfile), else by distance.
	Zone            int
	ZoneFromProfile bool
	// ZoneOrigin is the ZIP3 where the parcel enters the network (Profile.ZoneOrigin).
	ZoneOrigin int
	// TransitDays, when above zero, is the profile's transit time for the route
	// (zone_tnt_mapping); ground services use it instead of their card's days.
	TransitDays int
	// AreaSurcharge is the destination ZIP's designation for this carrier in the profile:
	// "", "DAS" or "EDAS". AreaSurchargeFromProfile says the profile lists the carrier's
	// surcharge ZIPs, which then replace the carrier's own lists.
	AreaSurcharge            string
	AreaSurchargeFromProfile bool
	ShipDate                 string // YYYY-MM-DD
	// DDP says the shipment goes abroad delivered duty paid (its declaration's incoterm): only
	// services with a DDP fee quote it.
	DDP bool
}

// Quote is one carrier service's price for a RateRequest.
type Quote struct {
	Service          string
	PostageCents     int64
	Surcharges       []Surcharge
	RetailCents      int64
	TransitDays      int
	Zone             int
	CountryZone      int // an international quote's zone, 1 to 20 (Zone is then 0)
	BillableWeightOz int64
	DimFactor        int   // the dim factor the billable weight used; DimFactor when 0
	CarrierVersion   int64 // the card version that priced the quote; 0 for a carrier without versions
}

// Surcharge is one addition to a rate's postage.
type Surcharge struct {
	Type        string // FUEL, DAS or EDAS
	AmountCents int64
}

// SurchargesCents is the sum of the quote's surcharges.
func (q Quote) SurchargesCents() int64 {
	var n int64
	for _, s := range q.Surcharges {
		n += s.AmountCents
	}
	return n
}

// TotalCents is what the quote costs: postage plus surcharges.
func (q Quote) TotalCents() int64 { return q.PostageCents + q.SurchargesCents() }

// Money is an amount of a currency; it is written as {amount: 7.45, currency: "USD"}.
type Money struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// USD makes Money of a number of US cents.
func USD(cents int64) Money { return Money{Amount: float64(cents) / 100, Currency: "USD"} }

// Rate is a quoted price for a shipment: one carrier service.
type Rate struct {
	ID                    string       `json:"id"`
	ShipmentID            string       `json:"shipment_id"`
	Carrier               string       `json:"carrier"`
	Service               string       `json:"service"`
	Price                 Money        `json:"price"`
	EstimatedDeliveryDate Timestamp    `json:"estimated_delivery_date"`
	EstimatedDeliveryDays int          `json:"estimated_delivery_days"`
	RateMetadata          RateMetadata `json:"rate_metadata"`

	PostageCents    int64 `json:"-"`
	SurchargesCents int64 `json:"-"`
	TotalCents      int64 `json:"-"`
	RetailCents     int64 `json:"-"`
}

// RateMetadata explains a rate's price, with the real product's field names.
type RateMetadata struct {
	USPSZone int `json:"usps_zone,omitempty"` // the distance zone, 1 to 8; absent abroad
	// CountryZone is an international rate's zone, 1 to 20: the card's zone of the country;
	// absent at home.
	CountryZone int `json:"country_zone,omitempty"`
	// BillableWeight is the weight the rate is priced at, in ounces.
	BillableWeight     int64               `json:"billable_weight"`
	WeightMetadata     WeightMetadata      `json:"weight_metadata"`
	SurchargesMetadata []SurchargeMetadata `json:"surcharges_metadata"`
	// CarrierVersion is the version of the carrier's card that priced the rate;
	// absent for a carrier a host plugs in without versions.
	CarrierVersion int64 `json:"carrier_version,omitempty"`
	// DDPFee is the fee for delivering duty paid, part of the price (a DDP surcharge); absent
	// unless the shipment is DDP.
	DDPFee *Money `json:"ddp_fee,omitempty"`
}

// WeightMetadata explains the billable weight: the larger of the actual weight and the
// dimensional weight (Volume / DimFactor pounds).
type WeightMetadata struct {
	ActualOzWeight   float64 `json:"actual_oz_weight"`
	BillableOzWeight int64   `json:"billable_oz_weight"`
	DimFactor        int     `json:"dim_factor"`    // cubic inches per dimensional pound
	DimThreshold     int     `json:"dim_threshold"` // cubic inches
	Volume           float64 `json:"volume"`        // cubic inches
}

// DimThreshold is the volume, in cubic inches, that rate_metadata reports as the threshold of
// dimensional weight (the real product's 1 cubic foot). The built-in cards price dimensional
// weight at every volume, so it is information, not a rule of theirs.
const DimThreshold = 1728

// SurchargeMetadata is one surcharge as rate_metadata shows it.
type SurchargeMetadata struct {
	SurchargeType string `json:"surcharge_type"` // FUEL, DAS, EDAS, INSURANCE
	Surcharge     Money  `json:"surcharge"`
}

// roundTo2 rounds to two decimals, as weights and volumes are shown.
func roundTo2(f float64) float64 { return math.Round(f*100) / 100 }

// Strategies of rate shopping.
const (
	StrategyAll      = "ALL"
	StrategyCheapest = "CHEAPEST"
	StrategyFastest  = "FASTEST"
)

// Rate error codes.
const (
	CodeZipNotServiced = "zip_not_serviced"
	CodeNoRates        = "no_rates_available"
	CodeUnknownProfile = "unknown_rate_shopping_profile"
)

// Shopper quotes shipments across carriers under a rate shopping profile.
type Shopper struct {
	carriers map[string]Carrier
}

// NewShopper returns a Shopper over the given carriers (keyed by their Name).
func NewShopper(carriers ...Carrier) *Shopper {
	s := &Shopper{carriers: map[string]Carrier{}}
	for _, c := range carriers {
		s.carriers[c.Name()] = c
	}
	return s
}

// Carrier returns the named carrier.
func (s *Shopper) Carrier(name string) (Carrier, bool) {
	c, ok := s.carriers[name]
	return c, ok
}

// Shop quotes a validated shipment request under profile p: the profile picks the carriers,
// where they deliver, the zone origin and the route's zone, and area surcharges. It returns
// the rates (IDs and shipment id unset) ordered by price, then transit days, then carrier and
// service, filtered by strategy, with leftOut: why each carrier of the profile that gave no
// rate, or each service a carrier left out while quoting others (a ServiceQuoter's), gave none
// (empty, not nil, when every one quoted). When no rate is found it returns a *RateError with
// each carrier's reason.
func (s *Shopper) Shop(ctx context.Context, p *Profile, sr *ShipmentRequest, shipDate time.Time) (rates []Rate, leftOut []Reason, err error) {
	if sr.International() {
		return s.shopInternational(ctx, p, sr, shipDate)
	}
	if sr.Origin.Country != "US" || sr.Destination.Country != "US" {
		reasons := make([]Reason, 0, len(p.Carriers))
		for _, name := range p.Carriers {
			reasons = append(reasons, Reason{Carrier: name, Message: "serves US domestic routes only"})
		}
		return nil, nil, &RateError{Code: CodeNoRates, Message: "no carrier serves routes outside the US", Reasons: reasons}
	}
	dest := zip3Index(sr.Destination.Zip)
	req := RateRequest{Origin: *sr.Origin, Destination: *sr.Destination, ShipDate: shipDate.Format(time.DateOnly)}
	req.LengthIn, req.WidthIn, req.HeightIn, req.WeightOz = sr.Parcel.Inches()
	req.ZoneOrigin = p.ZoneOrigin(zip3Index(sr.Origin.Zip))
	zone, transit, mapped, ok := p.Zone(zip3Index(sr.Origin.Zip), dest)
	if !ok {
		return nil, nil, &RateError{Code: CodeZipNotServiced, Message: "no zone for the route"}
	}
	req.Zone, req.TransitDays, req.ZoneFromProfile = zone, transit, mapped

	reasons := []Reason{}
	covered := false
	for _, name := range p.Carriers {
		c, ok := s.carriers[name]
		if !ok {
			reasons = append(reasons, Reason{Carrier: name, Message: "carrier is not available"})
			continue
		}
		if !p.Covers(name, dest) {
			reasons = append(reasons, Reason{Carrier: name, Message: fmt.Sprintf("does not deliver to ZIP3 %s under profile %s", sr.Destination.Zip[:3], p.Key)})
			continue
		}
		req.AreaSurcharge, req.AreaSurchargeFromProfile = p.AreaSurcharge(name, sr.Destination.Zip)
		quotes, left, err := quote(ctx, c, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			covered = covered || !errors.Is(err, ErrZipNotServiced)
			reasons = append(reasons, Reason{Carrier: name, Message: err.Error()})
			continue
		}
		covered = true
		for _, q := range quotes {
			rates = append(rates, rateOf(name, q, req, shipDate))
		}
		for _, l := range left {
			reasons = append(reasons, Reason{Carrier: name, Service: l.Service, Message: l.Message})
		}
	}
	if !covered {
		return nil, nil, &RateError{Code: CodeZipNotServiced, Message: "no carrier of the profile delivers to " + sr.Destination.Zip, Reasons: reasons}
	}
	if len(rates) == 0 {
		return nil, nil, &RateError{Code: CodeNoRates, Message: "no carrier can carry the parcel on this route", Reasons: reasons}
	}
	return PickRates(rates, sr.RateShoppingStrategy), reasons, nil
}

// quote asks c for its quotes, and a ServiceQuoter also for the services it left out (their
// Carrier is not read: the profile's name for c is).
func quote(ctx context.Context, c Carrier, req RateRequest) ([]Quote, []Reason, error) {
	if sq, ok := c.(ServiceQuoter); ok {
		return sq.Quotes(ctx, req)
	}
	quotes, err := c.Rates(ctx, req)
	return quotes, nil, err
}

func rateOf(carrier string, q Quote, req RateRequest, shipDate time.Time) Rate {
	dimFactor := cmp.Or(q.DimFactor, DimFactor)
	r := Rate{Carrier: carrier, Service: q.Service, EstimatedDeliveryDays: q.TransitDays,
		EstimatedDeliveryDate: Timestamp{AddBusinessDays(shipDate, q.TransitDays)},
		PostageCents:          q.PostageCents, SurchargesCents: q.SurchargesCents(), TotalCents: q.TotalCents(), RetailCents: q.RetailCents,
		RateMetadata: RateMetadata{USPSZone: q.Zone, CountryZone: q.CountryZone, BillableWeight: q.BillableWeightOz,
			WeightMetadata: WeightMetadata{ActualOzWeight: roundTo2(req.WeightOz), BillableOzWeight: q.BillableWeightOz,
				DimFactor: dimFactor, DimThreshold: DimThreshold, Volume: roundTo2(req.LengthIn * req.WidthIn * req.HeightIn)},
			SurchargesMetadata: make([]SurchargeMetadata, 0, len(q.Surcharges)), CarrierVersion: q.CarrierVersion}}
	r.Price = USD(r.TotalCents)
	for _, s := range q.Surcharges {
		r.RateMetadata.SurchargesMetadata = append(r.RateMetadata.SurchargesMetadata, SurchargeMetadata{SurchargeType: s.Type, Surcharge: USD(s.AmountCents)})
		if s.Type == SurchargeDDP {
			fee := USD(s.AmountCents)
			r.RateMetadata.DDPFee = &fee
		}
	}
	return r
}

// PickRates orders rates by price (ties: fewer days, then carrier and service) and applies the
// strategy: ALL keeps every rate, CHEAPEST the one cheapest (ties: fewer days), FASTEST the one
// fastest (ties: cheaper).
func PickRates(rates []Rate, strategy string) []Rate {
	slices.SortStableFunc(rates, func(a, b Rate) int {
		return cmp.Or(cmp.Compare(a.TotalCents, b.TotalCents), cmp.Compare(a.EstimatedDeliveryDays, b.EstimatedDeliveryDays),
			cmp.Compare(a.Carrier, b.Carrier), cmp.Compare(a.Service, b.Service))
	})
	switch strategy {
	case StrategyCheapest:
		return rates[:1]
	case StrategyFastest:
		best := 0
		for i, r := range rates {
			// rates are ordered by price, so the first fastest is the cheapest of the fastest.
			if r.EstimatedDeliveryDays < rates[best].EstimatedDeliveryDays {
				best = i
			}
		}
		return []Rate{rates[best]}
	}
	return rates
}

// Cheapest returns the cheapest of rates (ties: fewer days), or false when there is none.
func Cheapest(rates []Rate) (Rate, bool) {
	if len(rates) == 0 {
		return Rate{}, false
	}
	best := rates[0]
	for _, r := range rates[1:] {
		if r.TotalCents < best.TotalCents || r.TotalCents == best.TotalCents && r.EstimatedDeliveryDays < best.EstimatedDeliveryDays {
			best = r
		}
	}
	return best, true
}

// AddBusinessDays returns the date n business days after day, at midnight UTC: days from
// Monday to Friday that are not US federal holidays as observed (BusinessDay). A parcel handed
// over on a weekend or a holiday starts counting on the next business day.
func AddBusinessDays(day time.Time, n int) time.Time {
	d := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, 0, 0, time.UTC)
	for n > 0 {
		d = d.AddDate(0, 0, 1)
		if BusinessDay(d) {
			n--
		}
	}
	return d
}
