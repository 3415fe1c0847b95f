package carrier

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/waybill/waybill/shipping"
)

// Card is a carrier's contract as an operator loads it: its services' price grids
// by weight break and zone, surcharges, limits, where it delivers, its zone chart and the
// tracking numbers it assigned. Every PUT of a card stores a new version; the one in force for
// a shipment is chosen by EffectiveFrom (InForce).
type Card struct {
	// Code is the carrier's code, the name on rates and labels. In a request body it is
	// optional and must equal the path's.
	Code           string          `json:"code,omitempty"`
	Name           string          `json:"name"`
	EffectiveFrom  string          `json:"effective_from"` // YYYY-MM-DD; today when omitted
	Services       []CardService   `json:"services"`
	DimFactor      int             `json:"dim_factor"` // cubic inches per dimensional pound; 166 when omitted
	MaxWeightOz    float64         `json:"max_weight_oz"`
	MaxLengthIn    float64         `json:"max_length_in"`
	MaxGirthIn     float64         `json:"max_length_plus_girth_in"`
	FuelSurcharges []FuelSurcharge `json:"fuel_surcharges"`
	DASCents       int64           `json:"das_cents"`
	EDASCents      int64           `json:"edas_cents"`
	DASZips        []string        `json:"das_zips"`
	EDASZips       []string        `json:"edas_zips"`
	// Coverage lists the destination ZIP3s and ranges ("900-935") the carrier delivers to;
	// nil delivers everywhere in the US.
	Coverage  []string         `json:"coverage" nullable:"true"`
	ZoneChart []ZoneChartEntry `json:"zone_chart"`
	Tracking  TrackingScheme   `json:"tracking"`
	// CountryZones maps the countries the card's international services deliver to (ISO
	// 3166-1 alpha-2) to their zones, 1 to 20; absent for a domestic card.
	CountryZones map[string]int `json:"country_zones,omitempty"`
}

// CardService prices one service: PricesCents[i][zone-1] is the price up to WeightBreaksOz[i]
// ounces (billable); above the last break the service does not carry the parcel.
type CardService struct {
	Code           string    `json:"code"`
	Name           string    `json:"name"`
	Expedited      bool      `json:"expedited"`
	MaxWeightOz    float64   `json:"max_weight_oz"` // the card's max_weight_oz when omitted
	TransitDays    []int     `json:"transit_days"`  // by zone, 8 entries (international: one per country zone)
	WeightBreaksOz []int64   `json:"weight_breaks_oz"`
	PricesCents    [][]int64 `json:"prices_cents"`
	// International marks a service that carries parcels abroad, to the card's CountryZones,
	// priced by country zone; a domestic service never quotes abroad, nor it at home.
	International bool `json:"international,omitempty"`
	// DDPFeeCents is what the service charges to deliver duty paid (incoterm DDP); a service
	// without it does not offer DDP. International services only.
	DDPFeeCents int64 `json:"ddp_fee_cents,omitempty"`
}

// FuelSurcharge is a fuel percentage and the day it takes effect.
type FuelSurcharge struct {
	EffectiveFrom string  `json:"effective_from"`
	Percent       float64 `json:"percent"` // at most four decimals, read exactly (PercentOf)
}

// ZoneChartEntry is the carrier's zone from an origin ZIP3 to a destination ZIP3 or range.
type ZoneChartEntry struct {
	OriginZip3 string `json:"origin_zip3"`
	DestZip3   string `json:"dest_zip3"`
	Zone       int    `json:"zone"`
}

// Bounds of a card. A longer collection is refused whole before its elements are checked, so a
// card of a megabyte of breaks is linear work with a short error list.
const (
	maxCardServices  = 100
	maxCardBreaks    = 1000
	maxCardFuel      = 1000
	maxCardZips      = 50000
	maxCardCoverage  = 1000
	maxCardZoneChart = 100000 // 100 origins of ~900 destination ZIP3s
	maxCardNameLen   = 200
)

var (
	carrierCodePattern = regexp.MustCompile(`^[A-Z0-9_]{2,32}$`)
	serviceCodePattern = regexp.MustCompile(`^[A-Z0-9_]{1,32}$`)
)

// ValidCode reports whether code can name a carrier: 2 to 32 of A-Z, 0-9 and _.
func ValidCode(code string) bool { return carrierCodePattern.MatchString(code) }

// Default limits of a card that gives none: the API's own parcel limits (150 lb, a 108 in
// side) and the common 165 in of length plus girth.
const (
	defaultMaxWeightOz = 2400
	defaultMaxLengthIn = 108
	defaultMaxGirthIn  = 165
)

// Normalize fills in a card's defaults: the code, today's date for effective_from, the dim
// factor, the limits, a luhn tracking scheme (DefaultTrackingScheme) when the card has none,
// and empty lists for absent ones (coverage stays nil: everywhere).
func (c *Card) Normalize(code string, today time.Time) {
	if c.Code == "" {
		c.Code = code
	}
	if c.EffectiveFrom == "" {
		c.EffectiveFrom = today.UTC().Format(time.DateOnly)
	}
	if c.DimFactor == 0 {
		c.DimFactor = shipping.DimFactor
	}
	for _, d := range []struct {
		f   *float64
		def float64
	}{{&c.MaxWeightOz, defaultMaxWeightOz}, {&c.MaxLengthIn, defaultMaxLengthIn}, {&c.MaxGirthIn, defaultMaxGirthIn}} {
		if *d.f == 0 {
			*d.f = d.def
		}
	}
	if c.Tracking.Scheme == "" && c.Tracking.RangeEnd == 0 {
		c.Tracking = DefaultTrackingScheme(c.Code)
	}
	for _, l := range []*[]string{&c.DASZips, &c.EDASZips} {
		if *l == nil {
			*l = []string{}
		}
	}
	if c.FuelSurcharges == nil {
		c.FuelSurcharges = []FuelSurcharge{}
	}
	if c.ZoneChart == nil {
		c.ZoneChart = []ZoneChartEntry{}
	}
	for i := range c.Services {
		if c.Services[i].MaxWeightOz == 0 {
			c.Services[i].MaxWeightOz = c.MaxWeightOz
		}
	}
}

// Validate checks a normalized card; the errors name fields by dotted paths
// (services[0].prices_cents[3][7]).
func (c *Card) Validate(code string) error {
	var v shipping.ValidationError
	if err := c.tooLarge(); err != nil {
		return err
	}
	c.validateHeader(&v, code)
	c.validateServices(&v)
	c.validateCountryZones(&v)
	c.validateFuel(&v)
	c.validateAreaSurcharges(&v)
	c.validateZIP3s(&v)
	c.Tracking.validate(&v, "tracking", c.Services)
	return v.Err()
}

// validateHeader checks the card's code against the path's, its name, date, dim factor and
// limits.
func (c *Card) validateHeader(v *shipping.ValidationError, code string) {
	if !ValidCode(code) {
		v.Add("code", "invalid", "must be 2 to 32 of A-Z, 0-9 and _")
	} else if c.Code != code {
		v.Add("code", "invalid", "must be the path's carrier code "+code)
	}
	if n := strings.TrimSpace(c.Name); n == "" {
		v.Add("name", "required", "is required")
	} else if len(c.Name) > maxCardNameLen {
		v.Add("name", "too_long", "must be at most 200 bytes")
	}
	checkDate(v, "effective_from", c.EffectiveFrom)
	if c.DimFactor < 1 || c.DimFactor > 1000 {
		v.Add("dim_factor", "out_of_range", "must be 1 to 1000")
	}
	positive(v, "max_weight_oz", c.MaxWeightOz)
	positive(v, "max_length_in", c.MaxLengthIn)
	positive(v, "max_length_plus_girth_in", c.MaxGirthIn)
}

// validateServices checks that the card has services, each with its own code.
func (c *Card) validateServices(v *shipping.ValidationError) {
	if len(c.Services) == 0 {
		v.Add("services", "required", "must have at least one service")
	}
	seen := map[string]bool{}
	for i := range c.Services {
		s := &c.Services[i]
		p := "services[" + strconv.Itoa(i) + "]"
		if !serviceCodePattern.MatchString(s.Code) {
			v.Add(p+".code", "invalid", "must be 1 to 32 of A-Z, 0-9 and _")
		} else if seen[s.Code] {
			v.Add(p+".code", "duplicate", "is another service's code")
		}
		seen[s.Code] = true
		c.validateService(v, p, s)
	}
}

// validateService checks one service under the field prefix p: its name, weight limit,
// transit days and price grid by zone, and what only an international service may carry.
func (c *Card) validateService(v *shipping.ValidationError, p string, s *CardService) {
	if strings.TrimSpace(s.Name) == "" {
		v.Add(p+".name", "required", "is required")
	} else if len(s.Name) > maxCardNameLen {
		v.Add(p+".name", "too_long", "must be at most 200 bytes")
	}
	positive(v, p+".max_weight_oz", s.MaxWeightOz)
	zones := c.zones(s)
	if zones > 0 && len(s.TransitDays) != zones {
		v.Add(p+".transit_days", "invalid", "must have "+strconv.Itoa(zones)+" entries, one per zone")
	}
	for z, d := range s.TransitDays {
		if d < 0 || d > 60 {
			v.Add(p+".transit_days["+strconv.Itoa(z)+"]", "out_of_range", "must be 0 to 60 days")
		}
	}
	validateGrid(v, p, s.WeightBreaksOz, s.PricesCents, zones)
	c.validateInternational(v, p, s)
}

// validateFuel checks the fuel surcharges: dated, a percentage of at most four decimals from 0
// to 100, no two in a row of the same date.
func (c *Card) validateFuel(v *shipping.ValidationError) {
	for i, f := range c.FuelSurcharges {
		p := "fuel_surcharges[" + strconv.Itoa(i) + "]"
		checkDate(v, p+".effective_from", f.EffectiveFrom)
		if pc, ok := PercentOf(f.Percent); !ok {
			v.Add(p+".percent", "invalid", "must have at most 4 decimals")
		} else if pc < 0 || pc > 100*PercentUnit {
			v.Add(p+".percent", "out_of_range", "must be 0 to 100")
		}
		if i > 0 && f.EffectiveFrom == c.FuelSurcharges[i-1].EffectiveFrom {
			v.Add(p+".effective_from", "duplicate", "is the date of the entry before")
		}
	}
}

// validateAreaSurcharges checks the DAS and EDAS amounts and their lists of five-digit ZIPs.
func (c *Card) validateAreaSurcharges(v *shipping.ValidationError) {
	if c.DASCents < 0 {
		v.Add("das_cents", "out_of_range", "must be at least 0")
	}
	if c.EDASCents < 0 {
		v.Add("edas_cents", "out_of_range", "must be at least 0")
	}
	for _, l := range []struct {
		field string
		zips  []string
	}{{"das_zips", c.DASZips}, {"edas_zips", c.EDASZips}} {
		for i, z := range l.zips {
			if len(z) != 5 || digitCount(z) != 5 {
				v.Add(l.field+"["+strconv.Itoa(i)+"]", "invalid", "must be a 5-digit ZIP code")
			}
		}
		checkDuplicateZips(v, l.field, l.zips)
	}
}

// validateZIP3s checks where the card delivers and its zone chart: ZIP3s and ranges of them,
// zones 1 to 8, and no route given two zones.
func (c *Card) validateZIP3s(v *shipping.ValidationError) {
	for i, r := range c.Coverage {
		if _, _, ok := shipping.ParseZIP3Range(r); !ok {
			v.Add("coverage["+strconv.Itoa(i)+"]", "invalid", `must be a ZIP3 ("900") or a range ("900-935")`)
		}
	}
	for i, e := range c.ZoneChart {
		p := "zone_chart[" + strconv.Itoa(i) + "]"
		if len(e.OriginZip3) != 3 || digitCount(e.OriginZip3) != 3 {
			v.Add(p+".origin_zip3", "invalid", "must be a ZIP3")
		}
		if _, _, ok := shipping.ParseZIP3Range(e.DestZip3); !ok {
			v.Add(p+".dest_zip3", "invalid", `must be a ZIP3 ("900") or a range ("900-935")`)
		}
		if e.Zone < 1 || e.Zone > 8 {
			v.Add(p+".zone", "out_of_range", "must be 1 to 8")
		}
	}
	checkChartOverlaps(v, c.ZoneChart)
}

// tooLarge refuses a card whose collections exceed their bounds.
func (c *Card) tooLarge() error {
	var v shipping.ValidationError
	tooMany := v.TooMany
	tooMany("services", len(c.Services), maxCardServices)
	tooMany("fuel_surcharges", len(c.FuelSurcharges), maxCardFuel)
	tooMany("das_zips", len(c.DASZips), maxCardZips)
	tooMany("edas_zips", len(c.EDASZips), maxCardZips)
	tooMany("coverage", len(c.Coverage), maxCardCoverage)
	tooMany("zone_chart", len(c.ZoneChart), maxCardZoneChart)
	tooMany("country_zones", len(c.CountryZones), maxCardCountryZones)
	if v.Err() == nil {
		for i, s := range c.Services {
			p := "services[" + strconv.Itoa(i) + "]"
			tooMany(p+".weight_breaks_oz", len(s.WeightBreaksOz), maxCardBreaks)
			tooMany(p+".prices_cents", len(s.PricesCents), maxCardBreaks)
		}
	}
	return v.Err()
}

// validateGrid checks a service's price grid: breaks positive and strictly increasing, one row
// of zone prices per break (8 for a domestic service; none checked when zones is 0), prices at
// least 0.
func validateGrid(v *shipping.ValidationError, p string, breaks []int64, prices [][]int64, zones int) {
	if len(breaks) == 0 {
		v.Add(p+".weight_breaks_oz", "required", "must have at least one weight break")
	}
	for i, b := range breaks {
		if b < 1 {
			v.Add(p+".weight_breaks_oz["+strconv.Itoa(i)+"]", "not_positive", "must be at least 1 oz")
		} else if i > 0 && b <= breaks[i-1] {
			v.Add(p+".weight_breaks_oz["+strconv.Itoa(i)+"]", "not_increasing", "must be above the break before")
		}
	}
	if len(prices) != len(breaks) {
		v.Add(p+".prices_cents", "invalid", "must have one row per weight break ("+strconv.Itoa(len(breaks))+")")
	}
	for i, row := range prices {
		rp := p + ".prices_cents[" + strconv.Itoa(i) + "]"
		if zones > 0 && len(row) != zones {
			v.Add(rp, "invalid", "must have "+strconv.Itoa(zones)+" prices, one per zone")
			continue
		}
		for z, c := range row {
			if c < 0 {
				v.Add(rp+"["+strconv.Itoa(z)+"]", "out_of_range", "must be at least 0")
			}
		}
	}
}

func checkDate(v *shipping.ValidationError, field, s string) {
	if _, err := time.Parse(time.DateOnly, s); err != nil {
		v.Add(field, "invalid", "must be a date, YYYY-MM-DD")
	}
}

func positive(v *shipping.ValidationError, field string, f float64) {
	if !(f > 0 && f < 1e9) {
		v.Add(field, "not_positive", "must be above 0")
	}
}

func digitCount(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}

// isUpperAlpha reports whether s is n letters A to Z.
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

// Service returns the card's service code, or nil.
func (c *Card) Service(code string) *CardService {
	for i := range c.Services {
		if c.Services[i].Code == code {
			return &c.Services[i]
		}
	}
	return nil
}

// FuelPercent is the fuel percentage in force on date: the entry with the latest
// effective_from on or before it; 0 before the first.
func (c *Card) FuelPercent(date string) Percent {
	var pc float64
	best := ""
	for _, f := range c.FuelSurcharges {
		if f.EffectiveFrom <= date && f.EffectiveFrom >= best {
			pc, best = f.Percent, f.EffectiveFrom
		}
	}
	p, _ := PercentOf(pc)
	return p
}

// WithGrid is a copy of the card whose service has the given grid, effective from date.
func (c *Card) WithGrid(service string, breaks []int64, prices [][]int64, effectiveFrom string) *Card {
	out := *c
	out.EffectiveFrom = effectiveFrom
	out.Services = slices.Clone(c.Services)
	for i := range out.Services {
		if out.Services[i].Code == service {
			out.Services[i].WeightBreaksOz, out.Services[i].PricesCents = breaks, prices
		}
	}
	return &out
}

// Percent is a percentage with four decimals, in units of 1/10000 of a percent.
type Percent int64

// PercentUnit is one percent.
const PercentUnit = 10000

// Of is p percent of cents, rounded half up to the cent.
func (p Percent) Of(cents int64) int64 {
	return (cents*int64(p) + 50*PercentUnit) / (100 * PercentUnit)
}

// PercentOf reads a percentage written as a number with at most four decimals (12.25) exactly:
// from the shortest decimal that is the float, so no binary rounding creeps in.
func PercentOf(f float64) (Percent, bool) {
	n, ok := parseDecimal(strconv.FormatFloat(f, 'f', -1, 64), 4)
	return Percent(n), ok
}

// parseDecimal parses a plain decimal number ("7", "7.45", "-0.5") with at most places
// decimals into an integer scaled by 10^places, exactly.
func parseDecimal(s string, places int) (int64, bool) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || len(whole) > 12 || digitCount(whole) != len(whole) || len(frac) > places ||
		digitCount(frac) != len(frac) || strings.Contains(s, ".") && frac == "" {
		return 0, false
	}
	n, _ := strconv.ParseInt(whole, 10, 64)
	for i := 0; i < places; i++ {
		n *= 10
		if i < len(frac) {
			n += int64(frac[i] - '0')
		}
	}
	if neg {
		n = -n
	}
	return n, true
}
