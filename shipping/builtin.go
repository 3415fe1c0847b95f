package shipping

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// carriersJSON holds the built-in carriers' rate cards.
//
//go:embed carriers.json
var carriersJSON []byte

// DimFactor is how many cubic inches make a dimensional pound.
const DimFactor = 166

// retailMarkupPercent is how much the carriers' list (retail) price is above ours.
const retailMarkupPercent = 25

// RateCard is a built-in carrier's price list.
type RateCard struct {
	Name           string        `json:"name"`
	TrackingPrefix string        `json:"tracking_prefix"`
	FuelBP         int64         `json:"fuel_surcharge_bp"` // basis points of postage
	DASCents       int64         `json:"das_cents"`
	EDASCents      int64         `json:"edas_cents"`
	MaxWeightOz    float64       `json:"max_weight_oz"`
	MaxLengthIn    float64       `json:"max_length_in"`
	MaxGirthIn     float64       `json:"max_length_plus_girth_in"`
	Services       []ServiceCard `json:"services"`
}

// ServiceCard prices one service: Prices[i][zone-1] is the price up to BreaksOz[i] ounces.
type ServiceCard struct {
	Code        string     `json:"code"`
	Name        string     `json:"name"`
	Expedited   bool       `json:"expedited"`
	MaxWeightOz float64    `json:"max_weight_oz"`
	TransitDays [8]int     `json:"transit_days"`
	BreaksOz    []int64    `json:"weight_breaks_oz"`
	Prices      [][8]int64 `json:"prices_cents"`
}

// BuiltinCarriers returns the carriers whose rate cards ship with waybill.
func BuiltinCarriers() []Carrier {
	var doc struct {
		Carriers []RateCard `json:"carriers"`
	}
	if err := json.Unmarshal(carriersJSON, &doc); err != nil {
		panic("shipping: carriers.json: " + err.Error())
	}
	out := make([]Carrier, 0, len(doc.Carriers))
	for _, c := range doc.Carriers {
		if err := c.check(); err != nil {
			panic("shipping: carriers.json: " + err.Error())
		}
		out = append(out, &TableCarrier{card: c})
	}
	return out
}

// BuiltinCarrierNames lists the built-in carriers' names.
func BuiltinCarrierNames() []string {
	var names []string
	for _, c := range BuiltinCarriers() {
		names = append(names, c.Name())
	}
	return names
}

func (c RateCard) check() error {
	if c.Name == "" || len(c.TrackingPrefix) != 2 || len(c.Services) == 0 {
		return fmt.Errorf("carrier %q: name, a two-letter tracking prefix and services are required", c.Name)
	}
	for _, s := range c.Services {
		if len(s.BreaksOz) == 0 || len(s.BreaksOz) != len(s.Prices) {
			return fmt.Errorf("%s %s: one price row per weight break", c.Name, s.Code)
		}
	}
	return nil
}

// TableCarrier is a built-in carrier priced from its RateCard.
type TableCarrier struct {
	card RateCard
}

// NewTableCarrier returns a carrier priced from card.
func NewTableCarrier(card RateCard) (*TableCarrier, error) {
	if err := card.check(); err != nil {
		return nil, err
	}
	return &TableCarrier{card: card}, nil
}

// Name is the carrier's code.
func (c *TableCarrier) Name() string { return c.card.Name }

// BillableWeightOz is the weight a parcel is priced at: the larger of its actual weight and its
// dimensional weight (L×W×H/166 lb), in whole ounces rounded up: at least one ounce.
func BillableWeightOz(lengthIn, widthIn, heightIn, weightOz float64) int64 {
	dim := lengthIn * widthIn * heightIn / DimFactor * 16
	// A hair of tolerance keeps float noise (16.000000001) from adding an ounce.
	return max(1, int64(math.Ceil(math.Max(weightOz, dim)-1e-9)))
}

// Rates quotes every service of the carrier that can carry the parcel.
func (c *TableCarrier) Rates(ctx context.Context, req RateRequest) ([]Quote, error) {
	if req.Zone < 1 || req.Zone > 8 {
		return nil, fmt.Errorf("no zone %d", req.Zone)
	}
	sides := [3]float64{req.LengthIn, req.WidthIn, req.HeightIn}
	for _, v := range [...]float64{sides[0], sides[1], sides[2], req.WeightOz} {
		// Also rejects NaN and absurd sizes, which would overflow the billable weight.
		if !(v > 0 && v < 1e6) {
			return nil, errors.New("parcel dimensions and weight must be positive")
		}
	}
	longest := max(sides[0], sides[1], sides[2])
	girth := 2 * (sides[0] + sides[1] + sides[2] - longest)
	switch {
	case req.WeightOz > c.card.MaxWeightOz:
		return nil, fmt.Errorf("parcel weighs more than %s", formatOz(c.card.MaxWeightOz))
	case longest > c.card.MaxLengthIn:
		return nil, fmt.Errorf("parcel is longer than %g in", c.card.MaxLengthIn)
	case longest+girth > c.card.MaxGirthIn:
		return nil, fmt.Errorf("parcel's length plus girth exceeds %g in", c.card.MaxGirthIn)
	}
	billable := BillableWeightOz(req.LengthIn, req.WidthIn, req.HeightIn, req.WeightOz)
	var quotes []Quote
	for i := range c.card.Services {
		s := &c.card.Services[i]
		if req.WeightOz > s.MaxWeightOz {
			continue
		}
		row := -1
		for j, b := range s.BreaksOz {
			if billable <= b {
				row = j
				break
			}
		}
		if row < 0 {
			continue
		}
		q := Quote{Service: s.Code, PostageCents: s.Prices[row][req.Zone-1], Zone: req.Zone, BillableWeightOz: billable,
			TransitDays: s.TransitDays[req.Zone-1]}
		if req.TransitDays > 0 && !s.Expedited {
			q.TransitDays = req.TransitDays
		}
		if fuel := (q.PostageCents*c.card.FuelBP + 5000) / 10000; fuel > 0 {
			q.Surcharges = append(q.Surcharges, Surcharge{Type: "FUEL", AmountCents: fuel})
		}
		area := int64(0)
		switch req.AreaSurcharge {
		case "DAS":
			area = c.card.DASCents
		case "EDAS":
			area = c.card.EDASCents
		}
		if area > 0 {
			q.Surcharges = append(q.Surcharges, Surcharge{Type: req.AreaSurcharge, AmountCents: area})
		}
		q.RetailCents = (q.TotalCents()*(100+retailMarkupPercent) + 50) / 100
		quotes = append(quotes, q)
	}
	if len(quotes) == 0 {
		return nil, fmt.Errorf("no service carries %d oz (billable)", billable)
	}
	return quotes, nil
}

func formatOz(oz float64) string { return fmt.Sprintf("%g lb", oz/16) }

// Purchase returns the label's tracking code: the carrier's prefix, 16 digits derived from the
// label id and a check digit. The same label id always gets the same code.
func (c *TableCarrier) Purchase(ctx context.Context, req PurchaseRequest) (string, error) {
	if req.LabelID == "" {
		return "", errors.New("label id is required")
	}
	if !c.hasService(req.Service) {
		return "", fmt.Errorf("%s has no service %q", c.card.Name, req.Service)
	}
	return TrackingCode(c.card.TrackingPrefix, req.LabelID), nil
}

// Void cancels one of the carrier's labels.
func (c *TableCarrier) Void(ctx context.Context, trackingCode string) error {
	if !strings.HasPrefix(trackingCode, c.card.TrackingPrefix) || !ValidTrackingCode(trackingCode) {
		return fmt.Errorf("%s did not issue tracking code %q", c.card.Name, trackingCode)
	}
	return nil
}

func (c *TableCarrier) hasService(code string) bool {
	for _, s := range c.card.Services {
		if s.Code == code {
			return true
		}
	}
	return false
}

// trackingDigits is how many digits follow a tracking code's prefix, before its check digit.
const trackingDigits = 16

// TrackingCode derives a tracking code from a label id: prefix, 16 decimal digits of the id's
// SHA-256 and a mod-10 (Luhn) check digit.
func TrackingCode(prefix, labelID string) string {
	sum := sha256.Sum256([]byte(labelID))
	b := make([]byte, 0, len(prefix)+trackingDigits+1)
	b = append(b, prefix...)
	for i := 0; i < trackingDigits; i++ {
		b = append(b, '0'+sum[i]%10)
	}
	return string(append(b, luhnDigit(b[len(prefix):])))
}

// ValidTrackingCode reports whether code has the built-in carriers' shape — two capital
// letters, 16 digits and a correct check digit.
func ValidTrackingCode(code string) bool {
	if len(code) != 2+trackingDigits+1 {
		return false
	}
	for i := 0; i < len(code); i++ {
		c := code[i]
		if i < 2 && (c < 'A' || c > 'Z') || i >= 2 && (c < '0' || c > '9') {
			return false
		}
	}
	return luhnDigit([]byte(code[2:len(code)-1])) == code[len(code)-1]
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
