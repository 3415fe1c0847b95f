package customs

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Declaration is a shipment's customs declaration, in the real product's shape (compat): the
// JSON fields of shipping.CustomsInfo, whose Go field names it keeps, and those waybill adds.
type Declaration struct {
	CustomsItems  []Item  `json:"customs_items"`
	CustomsSigner string  `json:"customs_signer"`
	Incoterm      *string `json:"incoterm" nullable:"true"`
	// ContentsType is MERCHANDISE, GIFT, DOCUMENTS, SAMPLE or RETURNED_GOODS.
	ContentsType string `json:"contents_type,omitempty"`
	// NonDeliveryOption is what the destination's post does with an undeliverable parcel:
	// RETURN it or ABANDON it.
	NonDeliveryOption string `json:"non_delivery_option,omitempty"`
	// AESITN is the Internal Transaction Number of the export's filing in the US Automated
	// Export System, "AES X" and 14 digits.
	AESITN string `json:"aes_itn,omitempty"`
}

// Item is one kind of goods in a parcel (shipping.CustomsItem's shape): Value is the declared
// value of the whole line in USD, Weight the line's weight in WeightUnit.
type Item struct {
	Description          string  `json:"description"`
	HarmonizedSystemCode *string `json:"harmonized_system_code" nullable:"true"`
	OriginCountry        string  `json:"origin_country"`
	Quantity             int64   `json:"quantity"`
	Value                float64 `json:"value"`
	Weight               float64 `json:"weight"`
	WeightUnit           string  `json:"weight_unit"`
}

// Contents types, non-delivery options and incoterms of an international declaration.
const (
	ContentsMerchandise   = "MERCHANDISE"
	ContentsGift          = "GIFT"
	ContentsDocuments     = "DOCUMENTS"
	ContentsSample        = "SAMPLE"
	ContentsReturnedGoods = "RETURNED_GOODS"

	NonDeliveryReturn  = "RETURN"
	NonDeliveryAbandon = "ABANDON"

	IncotermDAP = "DAP" // delivered at place: the addressee pays duties and taxes
	IncotermDDP = "DDP" // delivered duty paid: the shipper pays them
)

// Limits of a declaration.
const (
	MaxItems          = 100
	MaxDescription    = 100 // characters
	MaxQuantity       = 1_000_000
	MaxValue          = 1_000_000 // USD per line
	maxSigner         = 255
	aesThresholdCents = 2_500_00 // 15 CFR 30.37(a): EEI is needed above $2,500 per Schedule B number
)

// Exemption is what the documents print instead of an AES ITN when no filing is needed: the
// exemption of 15 CFR 30.37(a), goods of one Schedule B number worth $2,500 or less.
const Exemption = "NOEEI 30.37(a)"

// Currency is the currency of every declared value.
const Currency = "USD"

var (
	contentsTypes      = []string{ContentsMerchandise, ContentsGift, ContentsDocuments, ContentsSample, ContentsReturnedGoods}
	nonDeliveryOptions = []string{NonDeliveryReturn, NonDeliveryAbandon}
	incoterms          = []string{IncotermDAP, IncotermDDP}
)

// ouncesPer converts the weight units a declaration takes to ounces.
var ouncesPer = map[string]float64{"OZ": 1, "LB": 16, "G": 1 / 28.349523125, "KG": 1000 / 28.349523125}

// FieldError names one invalid field of a declaration, in the shape of shipping.FieldError
// (which this package cannot import: shipping imports it): Field is a dotted path such as
// "customs_info.customs_items[2].harmonized_system_code".
type FieldError struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Validate checks the declaration of an international shipment sent from the country from (an
// ISO code; the US export rule applies to shipments from "US") in a parcel weighing parcelOz
// ounces, and normalizes it: text trimmed, codes upper-cased, the HS codes' dots dropped, the
// defaults filled in (MERCHANDISE, RETURN, DAP). It returns every invalid field, nil when there
// is none.
func (d *Declaration) Validate(from string, parcelOz float64) []FieldError {
	const p = "customs_info"
	var errs []FieldError
	add := func(field, code, message string) {
		errs = append(errs, FieldError{Field: field, Code: code, Message: message})
	}
	switch n := len(d.CustomsItems); {
	case n == 0:
		add(p+".customs_items", "required", "must list at least one item")
	case n > MaxItems:
		add(p+".customs_items", "too_many", fmt.Sprintf("must list at most %d items", MaxItems))
		return errs
	}
	weightsOK := true
	for i := range d.CustomsItems {
		before := len(errs)
		errs = d.CustomsItems[i].validate(fmt.Sprintf("%s.customs_items[%d]", p, i), errs)
		for _, e := range errs[before:] {
			weightsOK = weightsOK && !strings.HasSuffix(e.Field, ".weight") && !strings.HasSuffix(e.Field, ".weight_unit")
		}
	}
	if weightsOK && parcelOz > 0 && len(d.CustomsItems) > 0 {
		// A relative tolerance keeps equal weights in different units (1 KG of items in a
		// 1000 G parcel) from failing on rounding.
		if oz := d.WeightOz(); oz > parcelOz*(1+1e-9) {
			add(p+".customs_items", "too_heavy", fmt.Sprintf("weigh %s together, more than the parcel's %s", formatOz(oz), formatOz(parcelOz)))
		}
	}

	d.CustomsSigner = strings.TrimSpace(d.CustomsSigner)
	switch {
	case d.CustomsSigner == "":
		add(p+".customs_signer", "required", "is required")
	case utf8.RuneCountInString(d.CustomsSigner) > maxSigner:
		add(p+".customs_signer", "too_long", fmt.Sprintf("must be at most %d characters", maxSigner))
	case hasControl(d.CustomsSigner):
		add(p+".customs_signer", "invalid", "must not contain control characters")
	}
	choose := func(field string, v *string, def string, allowed []string) {
		*v = strings.ToUpper(strings.TrimSpace(*v))
		if *v == "" {
			*v = def
		} else if !slices.Contains(allowed, *v) {
			add(p+"."+field, "invalid", "must be one of "+strings.Join(allowed, ", "))
		}
	}
	choose("contents_type", &d.ContentsType, ContentsMerchandise, contentsTypes)
	choose("non_delivery_option", &d.NonDeliveryOption, NonDeliveryReturn, nonDeliveryOptions)
	term := ""
	if d.Incoterm != nil {
		term = *d.Incoterm
	}
	choose("incoterm", &term, IncotermDAP, incoterms)
	d.Incoterm = &term

	d.AESITN = strings.ToUpper(strings.TrimSpace(d.AESITN))
	switch {
	case d.AESITN != "" && !ValidITN(d.AESITN):
		add(p+".aes_itn", "invalid", "must be AES X followed by 14 digits, e.g. AES X20260115123456")
	case d.AESITN == "" && strings.EqualFold(from, "US"):
		if code, cents := d.largestHSTotal(); cents > aesThresholdCents {
			add(p+".aes_itn", "required", fmt.Sprintf("is required: the lines under HS code %s total $%s, more than $2,500 (15 CFR 30.37(a))", code, formatCents(cents)))
		}
	}
	return errs
}

func (it *Item) validate(p string, errs []FieldError) []FieldError {
	add := func(field, code, message string) {
		errs = append(errs, FieldError{Field: p + "." + field, Code: code, Message: message})
	}
	it.Description = strings.TrimSpace(it.Description)
	switch {
	case it.Description == "":
		add("description", "required", "is required")
	case utf8.RuneCountInString(it.Description) > MaxDescription:
		add("description", "too_long", fmt.Sprintf("must be at most %d characters", MaxDescription))
	case hasControl(it.Description):
		add("description", "invalid", "must not contain control characters")
	}
	hs := ""
	if it.HarmonizedSystemCode != nil {
		hs = strings.ReplaceAll(strings.TrimSpace(*it.HarmonizedSystemCode), ".", "")
	}
	switch {
	case hs == "":
		add("harmonized_system_code", "required", "is required")
	case len(hs) < 6 || len(hs) > 10 || strings.ContainsFunc(hs, func(r rune) bool { return r < '0' || r > '9' }):
		add("harmonized_system_code", "invalid", "must be 6 to 10 digits (dots are dropped), e.g. 6109.10 or 6109100012")
	default:
		it.HarmonizedSystemCode = &hs
	}
	it.OriginCountry = strings.ToUpper(strings.TrimSpace(it.OriginCountry))
	if it.OriginCountry == "" {
		add("origin_country", "required", "is required")
	} else if _, ok := LookupCountry(it.OriginCountry); !ok {
		add("origin_country", "invalid", "must be an ISO 3166-1 alpha-2 country code")
	}
	switch {
	case it.Quantity < 1:
		add("quantity", "not_positive", "must be at least 1")
	case it.Quantity > MaxQuantity:
		add("quantity", "too_large", fmt.Sprintf("must be at most %d", MaxQuantity))
	}
	switch {
	case !(it.Value > 0) || math.Round(it.Value*100) < 1:
		add("value", "not_positive", "must be at least 0.01 (USD)")
	case it.Value > MaxValue:
		add("value", "too_large", fmt.Sprintf("must be at most %d (USD)", MaxValue))
	}
	it.WeightUnit = strings.ToUpper(strings.TrimSpace(it.WeightUnit))
	oz, ok := ouncesPer[it.WeightUnit]
	if !ok {
		add("weight_unit", "invalid", "must be OZ, LB, G or KG")
	}
	if !(it.Weight > 0) || ok && !(it.Weight*oz > 0) || math.IsInf(it.Weight, 0) {
		add("weight", "not_positive", "must be greater than 0")
	}
	return errs
}

// ValidITN reports whether itn is an AES Internal Transaction Number as documents print it:
// "AES X" followed by 14 digits.
func ValidITN(itn string) bool {
	digits, ok := strings.CutPrefix(itn, "AES X")
	return ok && len(digits) == 14 && !strings.ContainsFunc(digits, func(r rune) bool { return r < '0' || r > '9' })
}

// largestHSTotal is the HS code whose lines together declare the most, and that total in cents.
func (d *Declaration) largestHSTotal() (code string, cents int64) {
	totals := map[string]int64{}
	for _, it := range d.CustomsItems {
		if it.HarmonizedSystemCode != nil {
			totals[*it.HarmonizedSystemCode] += valueCents(it.Value)
		}
	}
	codes := make([]string, 0, len(totals))
	for c := range totals {
		codes = append(codes, c)
	}
	sort.Strings(codes) // the same declaration names the same code
	for _, c := range codes {
		if totals[c] > cents {
			code, cents = c, totals[c]
		}
	}
	return code, cents
}

// ExportStatement is what the documents print for the US export filing: "AES X…" when the
// declaration has an ITN, else the exemption NOEEI 30.37(a).
func (d *Declaration) ExportStatement() string {
	if d.AESITN != "" {
		return d.AESITN
	}
	return Exemption
}

// notUSExport is what the documents print on the AES / ITN line of an export from another
// country without an ITN: the US exemption cites a US rule that does not apply there.
const notUSExport = "Not a US export"

// exportStatement is what d's documents print on the AES / ITN line: the US filing
// (Declaration.ExportStatement) for an export from the US, or when an ITN is given; otherwise
// notUSExport.
func (d Document) exportStatement() string {
	if strings.EqualFold(d.From.Country, "US") || d.Declaration.AESITN != "" {
		return d.Declaration.ExportStatement()
	}
	return notUSExport
}

// TotalValueCents is the declared value of all lines, in US cents.
func (d *Declaration) TotalValueCents() int64 {
	var total int64
	for _, it := range d.CustomsItems {
		total += valueCents(it.Value)
	}
	return total
}

// WeightOz is the weight of all lines in ounces (lines in an unknown unit count nothing).
func (d *Declaration) WeightOz() float64 {
	total := 0.0
	for _, it := range d.CustomsItems {
		total += it.Weight * ouncesPer[it.WeightUnit]
	}
	return total
}

// Customs forms.
const (
	FormCN22 = "CN22"
	FormCN23 = "CN23"
)

// cn22Limits: a CN22 declares parcels worth less than $400 and weighing less than 4 lb.
const (
	cn22MaxValueCents = 400_00
	cn22MaxWeightOz   = 4 * 16
)

// Form is the customs form a parcel of parcelOz ounces with this declaration travels with:
// CN22 when its total value is under $400, the parcel under 4 lb and the items fit the CN22's
// one page; CN23 otherwise.
func (d *Declaration) Form(parcelOz float64) string {
	if d.TotalValueCents() < cn22MaxValueCents && parcelOz < cn22MaxWeightOz && cn22Fits(d.CustomsItems) {
		return FormCN22
	}
	return FormCN23
}

func valueCents(usd float64) int64 { return int64(math.Round(usd * 100)) }

// formatCents shows cents as dollars with two decimals and no grouping: "3000.00", the form
// that reads back from a document as typed.
func formatCents(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return fmt.Sprintf("%s%d.%02d", sign, c/100, c%100)
}

// formatOz shows a weight in ounces as pounds and kilograms: "2.25 LB (1.02 KG)".
func formatOz(oz float64) string {
	return fmt.Sprintf("%s LB (%s KG)", trimFloat(oz/16, 2), trimFloat(oz*0.028349523125, 2))
}

// trimFloat formats v with at most decimals decimals, without trailing zeros: 2.5, 2, 0.01.
func trimFloat(v float64, decimals int) string {
	s := fmt.Sprintf("%.*f", decimals, v)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}
