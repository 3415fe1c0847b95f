package shipping

import (
	"github.com/waybill/waybill/shipping/customs"
)

// International shipments: addresses abroad, and the customs declaration a shipment across a
// border needs.

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

// HasCustomsDocuments reports whether the shipment's label has customs documents (a
// declaration and a commercial invoice): it crosses a border, declared (as it must be).
func (s *Shipment) HasCustomsDocuments() bool { return s.International() && s.CustomsInfo != nil }

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

// ForeignCountry is the country an international route is zoned by: the end that is not the US.
func (r *RateRequest) ForeignCountry() string {
	if r.Destination.Country != "US" {
		return r.Destination.Country
	}
	return r.Origin.Country
}

// International reports whether the route crosses a border. A request that leaves a country
// empty (a host's test, say) is domestic, as before countries mattered.
func (r *RateRequest) International() bool {
	return r.Origin.Country != "" && r.Destination.Country != "" && r.Origin.Country != r.Destination.Country
}
