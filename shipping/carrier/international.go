package carrier

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/customs"
)

// A card's international services: their country zones, and how they quote a route abroad.

// Bounds of a card's country zones.
const (
	MaxCountryZone      = 20
	maxCardCountryZones = 300
)

// zones is how many zones the service prices: 8 for a domestic service, the card's highest
// country zone for an international one (0 when it has none, which validateCountryZones
// reports).
func (c *Card) zones(s *CardService) int {
	if !s.International {
		return 8
	}
	n := 0
	for _, z := range c.CountryZones {
		if z >= 1 && z <= MaxCountryZone {
			n = max(n, z)
		}
	}
	return n
}

// validateInternational checks what only an international service may carry.
func (c *Card) validateInternational(v *shipping.ValidationError, p string, s *CardService) {
	switch {
	case s.DDPFeeCents < 0:
		v.Add(p+".ddp_fee_cents", "out_of_range", "must be at least 0")
	case s.DDPFeeCents > 0 && !s.International:
		v.Add(p+".ddp_fee_cents", "invalid", "is for international services only")
	}
}

// validateCountryZones checks the card's country zones: ISO 3166-1 codes other than the US
// (served by domestic services), zones 1 to 20, and present when a service is international.
func (c *Card) validateCountryZones(v *shipping.ValidationError) {
	international := slices.ContainsFunc(c.Services, func(s CardService) bool { return s.International })
	if international && len(c.CountryZones) == 0 {
		v.Add("country_zones", "required", "must list the countries the international services deliver to")
	}
	for _, code := range slices.Sorted(maps.Keys(c.CountryZones)) {
		f := "country_zones." + code
		switch _, ok := customs.LookupCountry(code); {
		case !ok || !isUpperAlpha(code, 2):
			v.Add(f, "invalid", "must be an ISO 3166-1 alpha-2 country code")
		case code == "US":
			v.Add(f, "invalid", "the US is served by domestic services")
		}
		if z := c.CountryZones[code]; z < 1 || z > MaxCountryZone {
			v.Add(f, "out_of_range", "must be a zone from 1 to 20")
		}
	}
}

// ErrCountryNotServiced is a carrier's reason for not quoting a country abroad that none of
// its international services delivers to, or a route at home when it has only international
// services.
var ErrCountryNotServiced = errors.New("country not serviced")

// ErrDDPNotOffered is a carrier's reason for not quoting a DDP shipment: none of its services
// that could carry it has a ddp_fee_cents.
var ErrDDPNotOffered = errors.New("DDP not offered")

// internationalRates quotes the international services of the card version v (compiled: card) for a route
// abroad: by the country's zone, with the weight breaks, DIM, limits and fuel as at home, and
// for a DDP shipment only the services with a DDP fee, the fee added to the price. Like Quotes,
// it also says why each service it left out while quoting others gave none.
func (c *Table) internationalRates(v *Version, card *Card, req shipping.RateRequest) ([]shipping.Quote, []shipping.Reason, error) {
	zone, ok := card.CountryZones[req.ForeignCountry()]
	if !ok || !slices.ContainsFunc(card.Services, func(s CardService) bool { return s.International }) {
		return nil, nil, ErrCountryNotServiced
	}
	if err := card.checkParcel(req); err != nil {
		return nil, nil, err
	}
	fuel := card.FuelPercent(req.ShipDate)
	billable := shipping.BillableWeightOz(req.LengthIn, req.WidthIn, req.HeightIn, req.WeightOz, card.DimFactor)
	var quotes []shipping.Quote
	var left []shipping.Reason
	noDDP := false
	for i := range card.Services {
		s := &card.Services[i]
		if !s.International {
			continue
		}
		row := slices.IndexFunc(s.WeightBreaksOz, func(b int64) bool { return billable <= b })
		switch {
		case req.WeightOz > s.MaxWeightOz:
			left = append(left, shipping.Reason{Carrier: c.code, Service: s.Code, Message: "parcel weighs more than " + formatOz(s.MaxWeightOz)})
			continue
		case row < 0:
			left = append(left, shipping.Reason{Carrier: c.code, Service: s.Code,
				Message: fmt.Sprintf("billable weight %d oz is above the service's last weight break, %d oz", billable, s.WeightBreaksOz[len(s.WeightBreaksOz)-1])})
			continue
		case req.DDP && s.DDPFeeCents == 0:
			noDDP = true
			left = append(left, shipping.Reason{Carrier: c.code, Service: s.Code, Message: ErrDDPNotOffered.Error()})
			continue
		}
		q := shipping.Quote{Service: s.Code, PostageCents: s.PricesCents[row][zone-1], CountryZone: zone, BillableWeightOz: billable,
			TransitDays: s.TransitDays[zone-1], DimFactor: card.DimFactor, CarrierVersion: v.Version}
		if f := fuel.Of(q.PostageCents); f > 0 {
			q.Surcharges = append(q.Surcharges, shipping.Surcharge{Type: "FUEL", AmountCents: f})
		}
		if req.DDP {
			q.Surcharges = append(q.Surcharges, shipping.Surcharge{Type: shipping.SurchargeDDP, AmountCents: s.DDPFeeCents})
		}
		q.RetailCents = (q.TotalCents()*(100+retailMarkupPercent) + 50) / 100
		quotes = append(quotes, q)
	}
	switch {
	case len(quotes) > 0:
		return quotes, left, nil
	case noDDP:
		return nil, nil, ErrDDPNotOffered
	}
	return nil, nil, fmt.Errorf("no service carries %d oz (billable)", billable)
}

// checkParcel refuses a parcel beyond the card's limits of weight, length and length plus
// girth, or with a size or weight that is not a positive number.
func (card *Card) checkParcel(req shipping.RateRequest) error {
	sides := [3]float64{req.LengthIn, req.WidthIn, req.HeightIn}
	for _, f := range [...]float64{sides[0], sides[1], sides[2], req.WeightOz} {
		// Also rejects NaN and absurd sizes, which would overflow the billable weight.
		if !(f > 0 && f < 1e6) {
			return errors.New("parcel dimensions and weight must be positive")
		}
	}
	longest := max(sides[0], sides[1], sides[2])
	girth := 2 * (sides[0] + sides[1] + sides[2] - longest)
	switch {
	case req.WeightOz > card.MaxWeightOz:
		return fmt.Errorf("parcel weighs more than %s", formatOz(card.MaxWeightOz))
	case longest > card.MaxLengthIn:
		return fmt.Errorf("parcel is longer than %g in", card.MaxLengthIn)
	case longest+girth > card.MaxGirthIn:
		return fmt.Errorf("parcel's length plus girth exceeds %g in", card.MaxGirthIn)
	}
	return nil
}
