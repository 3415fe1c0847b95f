package rating

import (
	"context"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/customs"
)

// shopInternational quotes a route abroad under profile p, as Shop does: every carrier of the
// profile is asked (the profile's coverage, surcharge ZIPs and zones are domestic), and a carrier
// that cannot serve the country says why. Only routes from or to the US are served.
func (s *Shopper) shopInternational(ctx context.Context, p *Profile, sr *shipping.ShipmentRequest, shipDate time.Time) ([]shipping.Rate, []shipping.Reason, error) {
	reasons := []shipping.Reason{}
	if sr.Origin.Country != "US" && sr.Destination.Country != "US" {
		for _, name := range p.Carriers {
			reasons = append(reasons, shipping.Reason{Carrier: name, Message: "serves routes from or to the US only"})
		}
		return nil, nil, &shipping.RateError{Code: shipping.CodeNoRates, Message: "no carrier serves routes between two countries outside the US", Reasons: reasons}
	}
	req := shipping.RateRequest{Origin: *sr.Origin, Destination: *sr.Destination, ShipDate: shipDate.Format(time.DateOnly)}
	req.LengthIn, req.WidthIn, req.HeightIn, req.WeightOz = sr.Parcel.Inches()
	req.DDP = sr.CustomsInfo != nil && sr.CustomsInfo.Incoterm != nil && *sr.CustomsInfo.Incoterm == customs.IncotermDDP
	var rates []shipping.Rate
	for _, name := range p.Carriers {
		c, ok := s.carriers[name]
		if !ok {
			reasons = append(reasons, shipping.Reason{Carrier: name, Message: "carrier is not available"})
			continue
		}
		quotes, left, err := quote(ctx, c, req)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			reasons = append(reasons, shipping.Reason{Carrier: name, Message: err.Error()})
			continue
		}
		for _, q := range quotes {
			rates = append(rates, rateOf(name, q, req, shipDate))
		}
		for _, l := range left {
			reasons = append(reasons, shipping.Reason{Carrier: name, Service: l.Service, Message: l.Message})
		}
	}
	if len(rates) == 0 {
		country := req.ForeignCountry()
		if c, ok := customs.LookupCountry(country); ok {
			country = c.Name
		}
		return nil, nil, &shipping.RateError{Code: shipping.CodeNoRates, Message: "no carrier of the profile can carry the parcel to or from " + country, Reasons: reasons}
	}
	return PickRates(rates, sr.RateShoppingStrategy), reasons, nil
}
