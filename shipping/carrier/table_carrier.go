package carrier

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/waybill/waybill/shipping"
)

// carriersJSON holds the sample carriers' cards, seeded into a new database.
//
//go:embed carriers.json
var carriersJSON []byte

// retailMarkupPercent is how much the carriers' list (retail) price is above ours.
const retailMarkupPercent = 25

// SampleCards returns the sample carriers' cards that a new database is seeded with.
func SampleCards() []Card {
	var doc struct {
		Carriers []Card `json:"carriers"`
	}
	if err := json.Unmarshal(carriersJSON, &doc); err != nil {
		panic("shipping: carriers.json: " + err.Error())
	}
	for i := range doc.Carriers {
		c := &doc.Carriers[i]
		c.Normalize(c.Code, time.Time{})
		if err := c.Validate(c.Code); err != nil {
			panic("shipping: carriers.json: " + err.Error())
		}
	}
	return doc.Carriers
}

// Version is one stored version of a carrier's card. Versions are never changed.
type Version struct {
	Version   int64 // 1, 2, … in the order they were stored
	CreatedAt time.Time
	Card      *Card
	// Load, when set, reads the version's whole card, and Card holds only its outline: its
	// effective_from, name, tracking and services' codes and names, which choose the version,
	// buy and void. The whole card is read and compiled the first time a quote needs it, so a
	// version no quote reaches (one no longer in force) costs no memory.
	Load func(ctx context.Context) (*Card, error)

	mu    sync.Mutex // one compilation at a time
	index atomic.Pointer[cardIndex]
}

// InForce returns the version in force on date (YYYY-MM-DD): the one with the latest
// effective_from on or before it; among those of that date, the one stored last. nil when
// none is in force yet.
func InForce(versions []*Version, date string) *Version {
	var best *Version
	for _, v := range versions {
		if e := v.Card.EffectiveFrom; e <= date && (best == nil || e > best.Card.EffectiveFrom ||
			e == best.Card.EffectiveFrom && v.Version > best.Version) {
			best = v
		}
	}
	return best
}

// InForceFrom returns the versions in force on date or on some day after it, oldest first:
// the one in force on date and every later one that will be in force on its effective_from.
func InForceFrom(versions []*Version, date string) []*Version {
	var out []*Version
	for _, v := range versions {
		if InForce(versions, max(date, v.Card.EffectiveFrom)) == v {
			out = append(out, v)
		}
	}
	return out
}

// Shown is the version a carrier is shown at on date: the one in force, or before any is, the
// first to come into force.
func Shown(versions []*Version, date string) *Version {
	if v := InForce(versions, date); v != nil || len(versions) == 0 {
		return v
	}
	first := versions[0].Card.EffectiveFrom
	for _, v := range versions {
		first = min(first, v.Card.EffectiveFrom)
	}
	return InForce(versions, first)
}

// cardIndex is a card compiled for quoting: coverage, area surcharge ZIPs and the zone chart
// in compact forms, beside the card's other parts (card, without the lists compiled here).
type cardIndex struct {
	card     *Card
	coverage *[1000]bool // nil: everywhere
	das      zipSet
	edas     zipSet
	chart    zoneChart
}

// Compile compiles the version for quoting now, if it is not yet: a caller may compile the
// versions in force side by side rather than leave them to quotes one by one.
func (v *Version) Compile(ctx context.Context) error {
	_, err := v.compiled(ctx)
	return err
}

// compiled returns the version compiled for quoting, reading its card first if need be.
func (v *Version) compiled(ctx context.Context) (*cardIndex, error) {
	if x := v.index.Load(); x != nil {
		return x, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if x := v.index.Load(); x != nil {
		return x, nil
	}
	c := v.Card
	if v.Load != nil {
		var err error
		if c, err = v.Load(ctx); err != nil {
			return nil, fmt.Errorf("rate card version %d: %w", v.Version, err)
		}
	}
	x := &cardIndex{das: newZipSet(c.DASZips), edas: newZipSet(c.EDASZips), chart: newZoneChart(c.ZoneChart)}
	if c.Coverage != nil {
		x.coverage = new([1000]bool)
		for _, r := range c.Coverage {
			lo, hi, _ := shipping.ParseZIP3Range(r)
			for z := lo; z <= hi; z++ {
				x.coverage[z] = true
			}
		}
	}
	priced := *c
	priced.DASZips, priced.EDASZips, priced.Coverage, priced.ZoneChart = nil, nil, nil, nil
	x.card = &priced
	v.index.Store(x)
	return x, nil
}

// Table is a carrier priced from its stored card versions.
type Table struct {
	code     string
	versions []*Version
}

// NewTable returns the carrier code priced from its versions.
func NewTable(code string, versions []*Version) *Table {
	return &Table{code: code, versions: versions}
}

// Name is the carrier's code.
func (c *Table) Name() string { return c.code }

// Versions are the carrier's stored versions, oldest first.
func (c *Table) Versions() []*Version { return c.versions }

// Rates quotes every service of the version in force on the ship date that can carry the
// parcel: the card's coverage, zone chart (unless the profile has the route), limits, dim
// factor, fuel percentage of the date and DAS/EDAS lists (unless the profile has the
// carrier's surcharges) apply.
func (c *Table) Rates(ctx context.Context, req shipping.RateRequest) ([]shipping.Quote, error) {
	quotes, _, err := c.Quotes(ctx, req)
	return quotes, err
}

// Quotes is Rates, also saying why each service left out while others quote (shipping.ServiceQuoter):
// a parcel above the service's weight limit, or billed above its last weight break.
func (c *Table) Quotes(ctx context.Context, req shipping.RateRequest) ([]shipping.Quote, []shipping.Reason, error) {
	v := InForce(c.versions, req.ShipDate)
	if v == nil {
		return nil, nil, fmt.Errorf("no rate card in force on %s", req.ShipDate)
	}
	x, err := v.compiled(ctx)
	if err != nil {
		return nil, nil, err
	}
	if req.International() {
		return c.internationalRates(v, x.card, req)
	}
	return c.domesticRates(v, x, req)
}

// domesticRates quotes the domestic services of the card version v (compiled: x) for a route at
// home: the card's coverage, zone chart (unless the profile has the route), limits, dim factor,
// fuel and area surcharges apply. Like Quotes, it also says why each service it left out while
// quoting others gave none.
func (c *Table) domesticRates(v *Version, x *cardIndex, req shipping.RateRequest) ([]shipping.Quote, []shipping.Reason, error) {
	card := x.card
	if !slices.ContainsFunc(card.Services, func(s CardService) bool { return !s.International }) {
		return nil, nil, ErrCountryNotServiced // a card of international services serves no route at home
	}
	dest := shipping.ZIP3Number(req.Destination.Zip)
	if x.coverage != nil && (dest < 0 || !x.coverage[dest]) {
		return nil, nil, shipping.ErrZipNotServiced
	}
	zone := req.Zone
	if z := x.chart.zone(req.ZoneOrigin, dest); !req.ZoneFromProfile && z > 0 {
		zone = z
	}
	if zone < 1 || zone > 8 {
		return nil, nil, fmt.Errorf("no zone %d", zone)
	}
	if err := card.checkParcel(req); err != nil {
		return nil, nil, err
	}
	area, areaCents := x.areaSurcharge(req)
	fuel := card.FuelPercent(req.ShipDate)
	billable := shipping.BillableWeightOz(req.LengthIn, req.WidthIn, req.HeightIn, req.WeightOz, card.DimFactor)
	var quotes []shipping.Quote
	var left []shipping.Reason
	for i := range card.Services {
		s := &card.Services[i]
		if s.International {
			continue // never quoted at home, nor listed as left out
		}
		if req.WeightOz > s.MaxWeightOz {
			left = append(left, shipping.Reason{Carrier: c.code, Service: s.Code, Message: "parcel weighs more than " + formatOz(s.MaxWeightOz)})
			continue
		}
		row := -1
		for j, b := range s.WeightBreaksOz {
			if billable <= b {
				row = j
				break
			}
		}
		if row < 0 {
			left = append(left, shipping.Reason{Carrier: c.code, Service: s.Code,
				Message: fmt.Sprintf("billable weight %d oz is above the service's last weight break, %d oz", billable, s.WeightBreaksOz[len(s.WeightBreaksOz)-1])})
			continue
		}
		q := shipping.Quote{Service: s.Code, PostageCents: s.PricesCents[row][zone-1], Zone: zone, BillableWeightOz: billable,
			TransitDays: s.TransitDays[zone-1], DimFactor: card.DimFactor, CarrierVersion: v.Version}
		if req.TransitDays > 0 && !s.Expedited {
			q.TransitDays = req.TransitDays
		}
		if f := fuel.Of(q.PostageCents); f > 0 {
			q.Surcharges = append(q.Surcharges, shipping.Surcharge{Type: "FUEL", AmountCents: f})
		}
		if areaCents > 0 {
			q.Surcharges = append(q.Surcharges, shipping.Surcharge{Type: area, AmountCents: areaCents})
		}
		q.RetailCents = (q.TotalCents()*(100+retailMarkupPercent) + 50) / 100
		quotes = append(quotes, q)
	}
	if len(quotes) == 0 {
		return nil, nil, fmt.Errorf("no service carries %d oz (billable)", billable)
	}
	return quotes, left, nil
}

// areaSurcharge is the destination's area surcharge (DAS, EDAS or none) and its amount on the
// card: the profile's designation when the profile lists the carrier's surcharge ZIPs, else the
// card's own lists'.
func (x *cardIndex) areaSurcharge(req shipping.RateRequest) (area string, cents int64) {
	area = req.AreaSurcharge
	if !req.AreaSurchargeFromProfile {
		area = ""
		if zip := req.Destination.Zip; x.edas.has(zip) {
			area = "EDAS"
		} else if x.das.has(zip) {
			area = "DAS"
		}
	}
	switch area {
	case "DAS":
		cents = x.card.DASCents
	case "EDAS":
		cents = x.card.EDASCents
	}
	return area, cents
}

func formatOz(oz float64) string { return fmt.Sprintf("%g lb", oz/16) }

// Purchase issues the label's tracking number: the next serial of the carrier's range, from
// req.Serials, in the scheme of the version in force on the ship date. Past the range's end it
// fails with shipping.ErrTrackingNumbersExhausted.
func (c *Table) Purchase(ctx context.Context, req shipping.PurchaseRequest) (string, error) {
	v := InForce(c.versions, req.ShipDate)
	if v == nil || v.Card.Service(req.Service) == nil {
		return "", fmt.Errorf("%s has no service %q in force on %s", c.code, req.Service, req.ShipDate)
	}
	if req.Serials == nil {
		return "", errors.New("no source of tracking serials")
	}
	t := &v.Card.Tracking
	serial, err := req.Serials.NextSerial(ctx, c.code, t.RangeStart, t.RangeEnd)
	if err != nil {
		return "", err
	}
	if serial > t.RangeEnd {
		return "", shipping.ErrTrackingNumbersExhausted
	}
	return t.Number(req.Service, serial), nil
}

// PurchaseMode is SellsNothing: a stored carrier's purchase numbers the label from its own
// range, which the database keeps; nothing is sold outside waybill.
func (c *Table) PurchaseMode() shipping.PurchaseMode { return shipping.SellsNothing }

// Void cancels one of the carrier's labels: a tracking number of one of its schemes.
func (c *Table) Void(ctx context.Context, trackingCode string) error {
	for _, v := range c.versions {
		if v.Card.Tracking.ValidTrackingNumber(trackingCode) {
			return nil
		}
	}
	return fmt.Errorf("%s did not issue tracking code %q", c.code, trackingCode)
}

// luhnDigit is the Luhn check digit of a string of digits.
func luhnDigit(digits []byte) byte {
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if (len(digits)-1-i)%2 == 0 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return byte('0' + (10-sum%10)%10)
}

// ServiceName is the name of one of the carrier's services ("Ground Advantage" for
// GROUND_ADVANTAGE) in the latest version that has it; ok is false for a code it never had.
func (c *Table) ServiceName(code string) (name string, ok bool) {
	for i := len(c.versions) - 1; i >= 0; i-- {
		if s := c.versions[i].Card.Service(code); s != nil {
			return s.Name, s.Name != ""
		}
	}
	return "", false
}

// DisplayName is the carrier's name as its latest version gives it ("Postline" for POSTLINE), as
// its labels print it; the code for a carrier without versions.
func (c *Table) DisplayName() string {
	for i := len(c.versions) - 1; i >= 0; i-- {
		if name := c.versions[i].Card.Name; name != "" {
			return name
		}
	}
	return c.code
}

// TrackingScheme is the scheme in which the carrier issued trackingCode: that of its latest
// version whose scheme makes such a number (ValidTrackingNumber); "" when none does.
func (c *Table) TrackingScheme(trackingCode string) string {
	for i := len(c.versions) - 1; i >= 0; i-- {
		if t := &c.versions[i].Card.Tracking; t.ValidTrackingNumber(trackingCode) {
			return t.Scheme
		}
	}
	return ""
}

// SampleCarriers returns the sample cards as carriers, each at version 1: what a new
// database's stored carriers quote, without a database (examples, tests).
func SampleCarriers() []shipping.Carrier {
	cards := SampleCards()
	out := make([]shipping.Carrier, len(cards))
	for i := range cards {
		out[i] = NewTable(cards[i].Code, []*Version{{Version: 1, Card: &cards[i]}})
	}
	return out
}
