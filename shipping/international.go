package shipping

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/waybill/waybill/shipping/customs"
)

// International shipments: addresses abroad, the customs declaration a shipment
// across a border needs, and the rating of a card's international services.

// validateForeignAddress checks an address outside the US against its country (the zero
// Country when the country is missing): the state where the country uses one, normalized to
// its subdivision's code, and the postal code in the country's format, normalized as the
// country writes it.
func validateForeignAddress(v *ValidationError, prefix string, a *Address, c customs.Country) {
	before := len(v.Fields)
	checkText(v, prefix+".state", a.State)
	stateOK := len(v.Fields) == before
	if c.Code == "" {
		if len(a.Zip) > 20 {
			v.Add(prefix+".zip", "invalid", "must be at most 20 characters")
		}
		return
	}
	if stateOK && c.StateRequired && a.State != "" && c.Subdivisions != nil {
		if s, ok := c.LookupState(a.State); ok {
			a.State = s.Code
		} else {
			stateOK = false
			v.Add(prefix+".state", "invalid", "is not a state or province of "+c.Name)
		}
	}
	if a.Zip == "" {
		return
	}
	zip, ok := c.NormalizePostalCode(a.Zip)
	switch {
	case !ok || len(zip) > 20:
		v.Add(prefix+".zip", "invalid", "is not a postal code of "+c.Name)
	case stateOK && a.State != "" && !c.PostalCodeInState(a.State, zip):
		a.Zip = zip
		v.Add(prefix+".zip", "state_mismatch", "is not in state "+a.State)
	default:
		a.Zip = zip
	}
}

// International reports whether the request's parcel crosses a border: its route's countries
// differ. Both addresses must be present.
func (r *ShipmentRequest) International() bool {
	return r.Origin.Country != r.Destination.Country
}

// International reports whether the shipment crosses a border.
func (s *Shipment) International() bool { return s.Origin.Country != s.Destination.Country }

// validateDeclaration checks customs_info: a shipment between two countries needs one, checked
// by customs' rules for the country the parcel leaves (customs.Declaration.Validate); a
// domestic shipment's is checked as before and otherwise ignored. A request whose countries are
// themselves invalid is not asked for a declaration: the address errors say what is wrong.
func (r *ShipmentRequest) validateDeclaration(v *ValidationError) {
	if r.Origin == nil || r.Destination == nil || !knownCountry(r.Origin.Country) || !knownCountry(r.Destination.Country) ||
		r.ReturnAddress != nil && !knownCountry(r.ReturnAddress.Country) || !r.International() {
		if r.CustomsInfo != nil {
			validateCustoms(v, r.CustomsInfo)
		}
		return
	}
	if r.CustomsInfo == nil {
		v.Add("customs_info", "required", "is required for a shipment to another country")
		return
	}
	var parcelOz float64
	if r.Parcel != nil {
		_, _, _, parcelOz = r.Parcel.Inches()
	}
	from, _ := r.Route()
	for _, f := range r.CustomsInfo.Validate(from.Country, parcelOz) {
		v.Add(f.Field, f.Code, f.Message)
	}
}

func knownCountry(code string) bool {
	_, ok := customs.LookupCountry(code)
	return ok && isUpperAlpha(code, 2)
}

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
func (c *Card) validateInternational(v *ValidationError, p string, s *CardService) {
	switch {
	case s.DDPFeeCents < 0:
		v.Add(p+".ddp_fee_cents", "out_of_range", "must be at least 0")
	case s.DDPFeeCents > 0 && !s.International:
		v.Add(p+".ddp_fee_cents", "invalid", "is for international services only")
	}
}

// validateCountryZones checks the card's country zones: ISO 3166-1 codes other than the US
// (served by domestic services), zones 1 to 20, and present when a service is international.
func (c *Card) validateCountryZones(v *ValidationError) {
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

// foreignCountry is the country an international route is zoned by: the end that is not the US.
func (r *RateRequest) foreignCountry() string {
	if r.Destination.Country != "US" {
		return r.Destination.Country
	}
	return r.Origin.Country
}

// international reports whether the route crosses a border. A request that leaves a country
// empty (a host's test, say) is domestic, as before countries mattered.
func (r *RateRequest) international() bool {
	return r.Origin.Country != "" && r.Destination.Country != "" && r.Origin.Country != r.Destination.Country
}

// internationalRates quotes the international services of the card version v (compiled: card) for a route
// abroad: by the country's zone, with the weight breaks, DIM, limits and fuel as at home, and
// for a DDP shipment only the services with a DDP fee, the fee added to the price. Like Quotes,
// it also says why each service it left out while quoting others gave none.
func (c *TableCarrier) internationalRates(v *CarrierVersion, card *Card, req RateRequest) ([]Quote, []Reason, error) {
	zone, ok := card.CountryZones[req.foreignCountry()]
	if !ok || !slices.ContainsFunc(card.Services, func(s CardService) bool { return s.International }) {
		return nil, nil, ErrCountryNotServiced
	}
	if err := card.checkParcel(req); err != nil {
		return nil, nil, err
	}
	fuel := card.FuelPercent(req.ShipDate)
	billable := BillableWeightOz(req.LengthIn, req.WidthIn, req.HeightIn, req.WeightOz, card.DimFactor)
	var quotes []Quote
	var left []Reason
	noDDP := false
	for i := range card.Services {
		s := &card.Services[i]
		if !s.International {
			continue
		}
		row := slices.IndexFunc(s.WeightBreaksOz, func(b int64) bool { return billable <= b })
		switch {
		case req.WeightOz > s.MaxWeightOz:
			left = append(left, Reason{Carrier: c.code, Service: s.Code, Message: "parcel weighs more than " + formatOz(s.MaxWeightOz)})
			continue
		case row < 0:
			left = append(left, Reason{Carrier: c.code, Service: s.Code,
				Message: fmt.Sprintf("billable weight %d oz is above the service's last weight break, %d oz", billable, s.WeightBreaksOz[len(s.WeightBreaksOz)-1])})
			continue
		case req.DDP && s.DDPFeeCents == 0:
			noDDP = true
			left = append(left, Reason{Carrier: c.code, Service: s.Code, Message: ErrDDPNotOffered.Error()})
			continue
		}
		q := Quote{Service: s.Code, PostageCents: s.PricesCents[row][zone-1], CountryZone: zone, BillableWeightOz: billable,
			TransitDays: s.TransitDays[zone-1], DimFactor: card.DimFactor, CarrierVersion: v.Version}
		if f := fuel.Of(q.PostageCents); f > 0 {
			q.Surcharges = append(q.Surcharges, Surcharge{Type: "FUEL", AmountCents: f})
		}
		if req.DDP {
			q.Surcharges = append(q.Surcharges, Surcharge{Type: SurchargeDDP, AmountCents: s.DDPFeeCents})
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

// SurchargeDDP is the surcharge type of a DDP fee: the duties and taxes the carrier collects
// from the shipper instead of the addressee.
const SurchargeDDP = "DDP"

// checkParcel refuses a parcel beyond the card's limits of weight, length and length plus
// girth, or with a size or weight that is not a positive number.
func (card *Card) checkParcel(req RateRequest) error {
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

// shopInternational quotes a route abroad under profile p, as Shop does: every carrier of the
// profile is asked (the profile's coverage, surcharge ZIPs and zones are domestic), and a carrier
// that cannot serve the country says why. Only routes from or to the US are served.
func (s *Shopper) shopInternational(ctx context.Context, p *Profile, sr *ShipmentRequest, shipDate time.Time) ([]Rate, []Reason, error) {
	reasons := []Reason{}
	if sr.Origin.Country != "US" && sr.Destination.Country != "US" {
		for _, name := range p.Carriers {
			reasons = append(reasons, Reason{Carrier: name, Message: "serves routes from or to the US only"})
		}
		return nil, nil, &RateError{Code: CodeNoRates, Message: "no carrier serves routes between two countries outside the US", Reasons: reasons}
	}
	req := RateRequest{Origin: *sr.Origin, Destination: *sr.Destination, ShipDate: shipDate.Format(time.DateOnly)}
	req.LengthIn, req.WidthIn, req.HeightIn, req.WeightOz = sr.Parcel.Inches()
	req.DDP = sr.CustomsInfo != nil && sr.CustomsInfo.Incoterm != nil && *sr.CustomsInfo.Incoterm == customs.IncotermDDP
	var rates []Rate
	for _, name := range p.Carriers {
		c, ok := s.carriers[name]
		if !ok {
			reasons = append(reasons, Reason{Carrier: name, Message: "carrier is not available"})
			continue
		}
		quotes, left, err := quote(ctx, c, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			reasons = append(reasons, Reason{Carrier: name, Message: err.Error()})
			continue
		}
		for _, q := range quotes {
			rates = append(rates, rateOf(name, q, req, shipDate))
		}
		for _, l := range left {
			reasons = append(reasons, Reason{Carrier: name, Service: l.Service, Message: l.Message})
		}
	}
	if len(rates) == 0 {
		country := req.foreignCountry()
		if c, ok := customs.LookupCountry(country); ok {
			country = c.Name
		}
		return nil, nil, &RateError{Code: CodeNoRates, Message: "no carrier of the profile can carry the parcel to or from " + country, Reasons: reasons}
	}
	return PickRates(rates, sr.RateShoppingStrategy), reasons, nil
}
