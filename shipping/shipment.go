package shipping

import (
	"strings"
	"time"
	"unicode/utf8"

	"github.com/waybill/waybill/shipping/customs"
)

// DefaultProfileKey names the rate shopping profile that ships with waybill and that
// POST /shipments uses unless the request names another.
const DefaultProfileKey = "default"

// Shipment statuses.
const (
	StatusOpen      = "OPEN"
	StatusPurchased = "SHIPPING_LABEL_PURCHASED"
	StatusCancelled = "CANCELLED"
)

// ShipmentStatuses lists every shipment status.
var ShipmentStatuses = []string{StatusOpen, StatusPurchased, StatusCancelled}

// Shipment is a shipment with its rates and, once bought, its label. Its Messages are why each
// carrier, or service, of its profile that gave no rate gave none (what rate shopping left
// out): empty when all quoted; nil, and absent, for a shipment quoted before they were kept,
// since what was left out of its quote is not known.
type Shipment struct {
	ID                   string    `json:"id"`
	AccountID            string    `json:"-"`
	Status               string    `json:"status"`
	Brand                string    `json:"brand"`
	ShipDate             string    `json:"ship_date"`
	Origin               Address   `json:"origin"`
	Destination          Address   `json:"destination"`
	ReturnAddress        Address   `json:"return_address"`
	Parcel               Parcel    `json:"parcel"`
	RateShoppingProfile  string    `json:"rate_shopping_profile"`
	RateShoppingStrategy string    `json:"rate_shopping_strategy"`
	LabelFormat          string    `json:"label_format"`
	CustomReference1     *string   `json:"custom_reference_1"`
	CustomReference2     *string   `json:"custom_reference_2"`
	ShippingRates        []Rate    `json:"shipping_rates"`
	Messages             []Reason  `json:"messages,omitzero"`
	ShippingLabel        *Label    `json:"shipping_label,omitempty"`
	CreatedAt            Timestamp `json:"created_at"`
	UpdatedAt            Timestamp `json:"updated_at"`
	// Carrier is the purchased rate's carrier; empty until a label is bought.
	Carrier string `json:"-"`
	// CustomsInfo is the customs declaration sent on create; nil (null) without one.
	CustomsInfo *CustomsInfo `json:"customs_info"`
	// IsReturn marks a return shipment: Origin and Destination are the outbound
	// shipment's, and the parcel travels back (Route). Absent unless true, so the renderings
	// stored before returns existed read the same.
	IsReturn bool `json:"is_return,omitempty"`
	// OrderID is waybill's id of the imported order the shipment was made for, if any;
	// Additional marks it another parcel of that order, shipped on purpose ("additional": true),
	// which ShipOrder lets ship beside the order's other labels.
	OrderID    string `json:"-"`
	Additional bool   `json:"-"`
}

// Address is a postal address.
type Address struct {
	Name    string `json:"name"`
	Company string `json:"company,omitempty"`
	Street1 string `json:"street1"`
	Street2 string `json:"street2,omitempty"`
	City    string `json:"city"`
	State   string `json:"state"`
	Zip     string `json:"zip"`
	Country string `json:"country"`
	Email   string `json:"email,omitempty"`
	Phone   string `json:"phone,omitempty"`
}

// Parcel is a box's size and weight in the units the client sent.
type Parcel struct {
	Length     float64 `json:"length"`
	Width      float64 `json:"width"`
	Height     float64 `json:"height"`
	LengthUnit string  `json:"length_unit"`
	Weight     float64 `json:"weight"`
	WeightUnit string  `json:"weight_unit"`
}

var inchesPer = map[string]float64{"IN": 1, "CM": 1 / 2.54}
var ouncesPer = map[string]float64{"OZ": 1, "LB": 16, "G": 1 / 28.349523125, "KG": 1000 / 28.349523125}

// Inches returns the parcel's sides in inches and its weight in ounces.
func (p Parcel) Inches() (length, width, height, weightOz float64) {
	in, oz := inchesPer[p.LengthUnit], ouncesPer[p.WeightUnit]
	return p.Length * in, p.Width * in, p.Height * in, p.Weight * oz
}

// Limits every parcel must meet, whatever the carrier.
const (
	MaxParcelWeightOz = 150 * 16
	MaxParcelSideIn   = 108
)

// Label formats.
const (
	LabelFormatPDF = "PDF"
	LabelFormatZPL = "ZPL"
	LabelFormatPNG = "PNG"
)

// ShipmentRequest is the body of POST /shipments.
type ShipmentRequest struct {
	Origin               *Address `json:"origin"`
	Destination          *Address `json:"destination"`
	ReturnAddress        *Address `json:"return_address"`
	Parcel               *Parcel  `json:"parcel"`
	ShipDate             string   `json:"ship_date"`
	RateShoppingProfile  string   `json:"rate_shopping_profile"`
	RateShoppingStrategy string   `json:"rate_shopping_strategy"`
	Brand                *string  `json:"brand" nullable:"true"`
	CustomReference1     *string  `json:"custom_reference_1" nullable:"true"`
	CustomReference2     *string  `json:"custom_reference_2" nullable:"true"`
	LabelFormat          string   `json:"label_format"`
	BuyCheapestRate      bool     `json:"buy_cheapest_rate"`
	// CustomsInfo is the shipment's customs declaration (compat), optional.
	CustomsInfo *CustomsInfo `json:"customs_info"`
	// IsReturn asks for a return label: from Destination back to ReturnAddress (Route).
	IsReturn bool `json:"is_return"`
}

// Route is where the parcel travels, which the rates are quoted for and the label is printed
// with: from the origin to the destination; for a return, from the destination back to the
// return address (the origin unless one is given). A validated request's ReturnAddress is set.
func (r *ShipmentRequest) Route() (from, to Address) {
	ret := r.Origin
	if r.ReturnAddress != nil {
		ret = r.ReturnAddress
	}
	if r.IsReturn {
		return *r.Destination, *ret
	}
	return *r.Origin, *r.Destination
}

// Routed is the request as rate shopping quotes it: its origin and destination those of its
// Route, so a return is priced exactly as a shipment sent from its destination.
func (r *ShipmentRequest) Routed() *ShipmentRequest {
	c := *r
	from, to := r.Route()
	c.Origin, c.Destination = &from, &to
	return &c
}

// LabelRoute is the label's sender and recipient: the return address to the destination; for
// a return, the destination back to the return address.
func (s *Shipment) LabelRoute() (from, to Address) {
	if s.IsReturn {
		return s.Destination, s.ReturnAddress
	}
	return s.ReturnAddress, s.Destination
}

// maxText is the longest accepted free-text field.
const maxText = 255

// Validate checks the request and fills in its defaults: ship_date today, the default profile,
// strategy ALL, label format PDF, the return address the origin; it normalizes customs_info.
// today is the current date in UTC. It returns the ship date.
func (r *ShipmentRequest) Validate(today time.Time) (time.Time, error) {
	var v ValidationError
	validateAddress(&v, "origin", r.Origin)
	validateAddress(&v, "destination", r.Destination)
	if r.ReturnAddress != nil {
		validateAddress(&v, "return_address", r.ReturnAddress)
	} else if r.Origin != nil {
		ra := *r.Origin
		r.ReturnAddress = &ra
	}
	validateParcel(&v, r.Parcel)
	r.validateDeclaration(&v)

	day := time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC)
	shipDate := day
	if r.ShipDate != "" {
		d, err := time.Parse(time.DateOnly, r.ShipDate)
		switch {
		case err != nil:
			v.Add("ship_date", "invalid", "must be a date YYYY-MM-DD")
		case d.Before(day):
			v.Add("ship_date", "in_past", "must not be in the past")
		case d.After(day.AddDate(1, 0, 0)):
			v.Add("ship_date", "too_far", "must be within a year")
		default:
			shipDate = d
		}
	}
	r.ShipDate = shipDate.Format(time.DateOnly)
	if r.RateShoppingProfile == "" {
		r.RateShoppingProfile = DefaultProfileKey
	}
	switch r.RateShoppingStrategy {
	case "":
		r.RateShoppingStrategy = StrategyAll
	case StrategyAll, StrategyCheapest, StrategyFastest:
	default:
		v.Add("rate_shopping_strategy", "invalid", "must be ALL, CHEAPEST or FASTEST")
	}
	switch r.LabelFormat {
	case "":
		r.LabelFormat = LabelFormatPDF
	case LabelFormatPDF, LabelFormatZPL, LabelFormatPNG:
	default:
		v.Add("label_format", "invalid", "must be PDF, ZPL or PNG")
	}
	if r.Brand != nil {
		CheckBrand(&v, "brand", r.Brand)
	}
	for _, f := range []struct {
		name string
		s    *string
	}{{"custom_reference_1", r.CustomReference1}, {"custom_reference_2", r.CustomReference2}} {
		if f.s != nil {
			checkText(&v, f.name, *f.s)
		}
	}
	return shipDate, v.Err()
}

// CheckBrand trims a brand (a shipment's, or an account's default) and checks it: text of at
// most 255 characters, without a comma, which separates the values of GET /shipments?brands=,
// so a brand holding one could never be filtered on.
func CheckBrand(v *ValidationError, field string, brand *string) {
	*brand = strings.TrimSpace(*brand)
	checkText(v, field, *brand)
	if strings.Contains(*brand, ",") {
		v.Add(field, "invalid", "must not contain a comma (the brands filter separates brands with commas)")
	}
}

// CheckReference validates a custom reference.
func CheckReference(field, s string) error {
	var v ValidationError
	checkText(&v, field, s)
	return v.Err()
}

func checkText(v *ValidationError, field, s string) {
	if utf8.RuneCountInString(s) > maxText {
		v.Add(field, "too_long", "must be at most 255 characters")
	} else if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		v.Add(field, "invalid", "must not contain control characters")
	}
}

func validateAddress(v *ValidationError, prefix string, a *Address) {
	if a == nil {
		v.Add(prefix, "required", "is required")
		return
	}
	trim := func(s *string) { *s = strings.TrimSpace(*s) }
	for _, s := range []*string{&a.Name, &a.Company, &a.Street1, &a.Street2, &a.City, &a.State, &a.Zip, &a.Country, &a.Email, &a.Phone} {
		trim(s)
	}
	a.State, a.Country = strings.ToUpper(a.State), strings.ToUpper(a.Country)
	// Which of state and zip are required depends on the country; an unknown
	// country is refused below, and then both are asked for as in the US.
	country, known := customs.LookupCountry(a.Country)
	needState, needZip := !known || country.StateRequired, !known || country.PostalCodeRequired
	required := []struct {
		name, value string
		needed      bool
	}{{"name", a.Name, true}, {"street1", a.Street1, true}, {"city", a.City, true}, {"state", a.State, needState},
		{"zip", a.Zip, needZip}, {"country", a.Country, true}}
	for _, f := range required {
		if f.needed && f.value == "" {
			v.Add(prefix+"."+f.name, "required", "is required")
		}
	}
	for _, f := range []struct{ name, value string }{{"name", a.Name}, {"company", a.Company}, {"street1", a.Street1},
		{"street2", a.Street2}, {"city", a.City}, {"email", a.Email}, {"phone", a.Phone}} {
		checkText(v, prefix+"."+f.name, f.value)
	}
	if a.Email != "" && (!strings.Contains(a.Email, "@") || strings.ContainsAny(a.Email, " \t")) {
		v.Add(prefix+".email", "invalid", "must be an email address")
	}
	if a.Country != "" && !isUpperAlpha(a.Country, 2) {
		v.Add(prefix+".country", "invalid", "must be a two-letter country code")
		return
	}
	if a.Country != "" && !known {
		v.Add(prefix+".country", "invalid", "must be an ISO 3166-1 alpha-2 country code")
		return
	}
	// US addresses are checked against the state codes and the ZIP table, as they always were;
	// other countries against the country table's postal-code formats and subdivisions.
	if a.Country != "US" {
		validateForeignAddress(v, prefix, a, country)
		return
	}
	if a.State != "" && !isUpperAlpha(a.State, 2) {
		v.Add(prefix+".state", "invalid", "must be a two-letter state code")
		return
	}
	switch {
	case a.Zip == "":
	case !ValidZIPFormat(a.Zip):
		v.Add(prefix+".zip", "invalid", "must be a ZIP code, 12345 or 12345-6789")
	case !KnownZIP(a.Zip):
		v.Add(prefix+".zip", "unknown_zip", "is not a known US ZIP code")
	case a.State != "" && !ZIPInState(a.Zip, a.State):
		v.Add(prefix+".zip", "state_mismatch", "is not in state "+a.State)
	}
}

func isUpperAlpha(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return true
}

func validateParcel(v *ValidationError, p *Parcel) {
	if p == nil {
		v.Add("parcel", "required", "is required")
		return
	}
	in, inOK := inchesPer[p.LengthUnit]
	if !inOK {
		v.Add("parcel.length_unit", "invalid", "must be IN or CM")
	}
	oz, ozOK := ouncesPer[p.WeightUnit]
	if !ozOK {
		v.Add("parcel.weight_unit", "invalid", "must be OZ, LB, G or KG")
	}
	for _, f := range []struct {
		name  string
		value float64
	}{{"length", p.Length}, {"width", p.Width}, {"height", p.Height}} {
		switch {
		case !(f.value > 0) || inOK && !(f.value*in > 0):
			v.Add("parcel."+f.name, "not_positive", "must be greater than 0")
		case inOK && !atMost(f.value*in, MaxParcelSideIn):
			v.Add("parcel."+f.name, "too_large", "must be at most 108 in")
		}
	}
	switch {
	case !(p.Weight > 0) || ozOK && !(p.Weight*oz > 0):
		v.Add("parcel.weight", "not_positive", "must be greater than 0")
	case ozOK && !atMost(p.Weight*oz, MaxParcelWeightOz):
		v.Add("parcel.weight", "too_heavy", "must be at most 150 lb")
	}
}

// atMost reports whether a value converted from another unit is within max, allowing for the
// conversion's float error: 68038.8555 g is exactly 150 lb, but comes to 2400.0000000000005 oz.
// (A value so small that it converts to 0 is not positive: a carrier could not price it.)
func atMost(converted, max float64) bool { return converted <= max*(1+1e-12) }
