package rating

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/waybill/waybill/shipping"
)

// Shopper quotes shipments across carriers under a rate shopping profile.
type Shopper struct {
	carriers map[string]shipping.Carrier
}

// NewShopper returns a Shopper over the given carriers (keyed by their Name).
func NewShopper(carriers ...shipping.Carrier) *Shopper {
	s := &Shopper{carriers: map[string]shipping.Carrier{}}
	for _, c := range carriers {
		s.carriers[c.Name()] = c
	}
	return s
}

// Shop quotes a validated shipment request under profile p: the profile picks the carriers,
// where they deliver, the zone origin and the route's zone, and area surcharges. It returns
// the rates (IDs and shipment id unset) ordered by price, then transit days, then carrier and
// service, filtered by strategy, with leftOut: why each carrier of the profile that gave no
// rate, or each service a carrier left out while quoting others (a shipping.ServiceQuoter's), gave none
// (empty, not nil, when every one quoted). When no rate is found it returns a *RateError with
// each carrier's reason.
func (s *Shopper) Shop(ctx context.Context, p *Profile, sr *shipping.ShipmentRequest, shipDate time.Time) (rates []shipping.Rate, leftOut []shipping.Reason, err error) {
	if sr.International() {
		return s.shopInternational(ctx, p, sr, shipDate)
	}
	if sr.Origin.Country != "US" || sr.Destination.Country != "US" {
		reasons := make([]shipping.Reason, 0, len(p.Carriers))
		for _, name := range p.Carriers {
			reasons = append(reasons, shipping.Reason{Carrier: name, Message: "serves US domestic routes only"})
		}
		return nil, nil, &shipping.RateError{Code: shipping.CodeNoRates, Message: "no carrier serves routes outside the US", Reasons: reasons}
	}
	dest := shipping.ZIP3Number(sr.Destination.Zip)
	req := shipping.RateRequest{Origin: *sr.Origin, Destination: *sr.Destination, ShipDate: shipDate.Format(time.DateOnly)}
	req.LengthIn, req.WidthIn, req.HeightIn, req.WeightOz = sr.Parcel.Inches()
	req.ZoneOrigin = p.ZoneOrigin(shipping.ZIP3Number(sr.Origin.Zip))
	zone, transit, mapped, ok := p.Zone(shipping.ZIP3Number(sr.Origin.Zip), dest)
	if !ok {
		return nil, nil, &shipping.RateError{Code: shipping.CodeZipNotServiced, Message: "no zone for the route"}
	}
	req.Zone, req.TransitDays, req.ZoneFromProfile = zone, transit, mapped

	reasons := []shipping.Reason{}
	covered := false
	for _, name := range p.Carriers {
		c, ok := s.carriers[name]
		if !ok {
			reasons = append(reasons, shipping.Reason{Carrier: name, Message: "carrier is not available"})
			continue
		}
		if !p.Covers(name, dest) {
			reasons = append(reasons, shipping.Reason{Carrier: name, Message: fmt.Sprintf("does not deliver to ZIP3 %s under profile %s", sr.Destination.Zip[:3], p.Key)})
			continue
		}
		req.AreaSurcharge, req.AreaSurchargeFromProfile = p.AreaSurcharge(name, sr.Destination.Zip)
		quotes, left, err := quote(ctx, c, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			covered = covered || !errors.Is(err, shipping.ErrZipNotServiced)
			reasons = append(reasons, shipping.Reason{Carrier: name, Message: err.Error()})
			continue
		}
		covered = true
		for _, q := range quotes {
			rates = append(rates, rateOf(name, q, req, shipDate))
		}
		for _, l := range left {
			reasons = append(reasons, shipping.Reason{Carrier: name, Service: l.Service, Message: l.Message})
		}
	}
	if !covered {
		return nil, nil, &shipping.RateError{Code: shipping.CodeZipNotServiced, Message: "no carrier of the profile delivers to " + sr.Destination.Zip, Reasons: reasons}
	}
	if len(rates) == 0 {
		return nil, nil, &shipping.RateError{Code: shipping.CodeNoRates, Message: "no carrier can carry the parcel on this route", Reasons: reasons}
	}
	return PickRates(rates, sr.RateShoppingStrategy), reasons, nil
}

// quote asks c for its quotes, and a shipping.ServiceQuoter also for the services it left out (their
// Carrier is not read: the profile's name for c is).
func quote(ctx context.Context, c shipping.Carrier, req shipping.RateRequest) ([]shipping.Quote, []shipping.Reason, error) {
	if sq, ok := c.(shipping.ServiceQuoter); ok {
		return sq.Quotes(ctx, req)
	}
	quotes, err := c.Rates(ctx, req)
	return quotes, nil, err
}

func rateOf(carrier string, q shipping.Quote, req shipping.RateRequest, shipDate time.Time) shipping.Rate {
	dimFactor := cmp.Or(q.DimFactor, shipping.DimFactor)
	r := shipping.Rate{Carrier: carrier, Service: q.Service, EstimatedDeliveryDays: q.TransitDays,
		EstimatedDeliveryDate: shipping.Timestamp{Time: AddBusinessDays(shipDate, q.TransitDays)},
		PostageCents:          q.PostageCents, SurchargesCents: q.SurchargesCents(), TotalCents: q.TotalCents(), RetailCents: q.RetailCents,
		RateMetadata: shipping.RateMetadata{USPSZone: q.Zone, CountryZone: q.CountryZone, BillableWeight: q.BillableWeightOz,
			WeightMetadata: shipping.WeightMetadata{ActualOzWeight: roundTo2(req.WeightOz), BillableOzWeight: q.BillableWeightOz,
				DimFactor: dimFactor, DimThreshold: shipping.DimThreshold, Volume: roundTo2(req.LengthIn * req.WidthIn * req.HeightIn)},
			SurchargesMetadata: make([]shipping.SurchargeMetadata, 0, len(q.Surcharges)), CarrierVersion: q.CarrierVersion}}
	r.Price = shipping.USD(r.TotalCents)
	for _, s := range q.Surcharges {
		r.RateMetadata.SurchargesMetadata = append(r.RateMetadata.SurchargesMetadata, shipping.SurchargeMetadata{SurchargeType: s.Type, Surcharge: shipping.USD(s.AmountCents)})
		if s.Type == shipping.SurchargeDDP {
			fee := shipping.USD(s.AmountCents)
			r.RateMetadata.DDPFee = &fee
		}
	}
	return r
}

// roundTo2 rounds to two decimals, as weights and volumes are shown.
func roundTo2(f float64) float64 { return math.Round(f*100) / 100 }

// PickRates orders rates by price (ties: fewer days, then carrier and service) and applies the
// strategy: ALL keeps every rate, CHEAPEST the one cheapest (ties: fewer days), FASTEST the one
// fastest (ties: cheaper).
func PickRates(rates []shipping.Rate, strategy string) []shipping.Rate {
	slices.SortStableFunc(rates, func(a, b shipping.Rate) int {
		return cmp.Or(cmp.Compare(a.TotalCents, b.TotalCents), cmp.Compare(a.EstimatedDeliveryDays, b.EstimatedDeliveryDays),
			cmp.Compare(a.Carrier, b.Carrier), cmp.Compare(a.Service, b.Service))
	})
	switch strategy {
	case shipping.StrategyCheapest:
		return rates[:1]
	case shipping.StrategyFastest:
		best := 0
		for i, r := range rates {
			// rates are ordered by price, so the first fastest is the cheapest of the fastest.
			if r.EstimatedDeliveryDays < rates[best].EstimatedDeliveryDays {
				best = i
			}
		}
		return []shipping.Rate{rates[best]}
	}
	return rates
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
