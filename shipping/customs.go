package shipping

import (
	"fmt"
	"slices"
	"strings"

	"github.com/waybill/waybill/shipping/customs"
)

// CustomsInfo is a shipment's customs declaration, in the real product's shape (compat), with
// the fields waybill adds (contents_type, non_delivery_option, aes_itn). An international
// shipment's is checked by customs.Declaration.Validate; a domestic one's by validateCustoms.
type CustomsInfo = customs.Declaration

// CustomsItem is one kind of goods in a parcel: Value is the declared value of the whole line
// in USD, Weight the line's weight in WeightUnit.
type CustomsItem = customs.Item

// Customs limits.
const (
	MaxCustomsItems    = 100
	MaxCustomsQuantity = 1_000_000
	MaxCustomsValue    = 1_000_000 // USD per item line
)

// Incoterms are the trade terms a domestic shipment's declaration may name: the Incoterms 2020
// rules and the older DDU, DAT and DEQ that carriers still accept. An international shipment's
// takes only DAP or DDP (customs.Declaration.Validate).
var Incoterms = []string{"EXW", "FCA", "FAS", "FOB", "CFR", "CIF", "CPT", "CIP", "DAP", "DPU", "DDP", "DDU", "DAT", "DEQ"}

// validateCustoms checks a customs declaration and normalizes it: text trimmed, country codes,
// weight units and the incoterm upper-cased, an empty HS code or incoterm dropped.
func validateCustoms(v *ValidationError, c *CustomsInfo) {
	const prefix = "customs_info"
	switch n := len(c.CustomsItems); {
	case n == 0:
		v.Add(prefix+".customs_items", "required", "must list at least one item")
	case n > MaxCustomsItems:
		v.Add(prefix+".customs_items", "too_many", fmt.Sprintf("must list at most %d items", MaxCustomsItems))
		return
	}
	for i := range c.CustomsItems {
		validateCustomsItem(v, fmt.Sprintf("%s.customs_items[%d]", prefix, i), &c.CustomsItems[i])
	}
	c.CustomsSigner = strings.TrimSpace(c.CustomsSigner)
	if c.CustomsSigner == "" {
		v.Add(prefix+".customs_signer", "required", "is required")
	} else {
		checkText(v, prefix+".customs_signer", c.CustomsSigner)
	}
	// The fields waybill adds are checked here too, but not defaulted: a domestic
	// declaration is stored as sent.
	for _, f := range []struct {
		name    string
		v       *string
		allowed []string
	}{{"contents_type", &c.ContentsType, []string{customs.ContentsMerchandise, customs.ContentsGift, customs.ContentsDocuments,
		customs.ContentsSample, customs.ContentsReturnedGoods}}, {"non_delivery_option", &c.NonDeliveryOption,
		[]string{customs.NonDeliveryReturn, customs.NonDeliveryAbandon}}} {
		if *f.v = strings.ToUpper(strings.TrimSpace(*f.v)); *f.v != "" && !slices.Contains(f.allowed, *f.v) {
			v.Add(prefix+"."+f.name, "invalid", "must be one of "+strings.Join(f.allowed, ", "))
		}
	}
	if c.AESITN = strings.ToUpper(strings.TrimSpace(c.AESITN)); c.AESITN != "" && !customs.ValidITN(c.AESITN) {
		v.Add(prefix+".aes_itn", "invalid", "must be AES X followed by 14 digits, e.g. AES X20260115123456")
	}
	if c.Incoterm != nil {
		term := strings.ToUpper(strings.TrimSpace(*c.Incoterm))
		switch {
		case term == "":
			c.Incoterm = nil
		case !slices.Contains(Incoterms, term):
			v.Add(prefix+".incoterm", "invalid", "must be one of "+strings.Join(Incoterms, ", "))
		default:
			c.Incoterm = &term
		}
	}
}

func validateCustomsItem(v *ValidationError, prefix string, it *CustomsItem) {
	it.Description = strings.TrimSpace(it.Description)
	if it.Description == "" {
		v.Add(prefix+".description", "required", "is required")
	} else {
		checkText(v, prefix+".description", it.Description)
	}
	if it.HarmonizedSystemCode != nil {
		code := strings.TrimSpace(*it.HarmonizedSystemCode)
		switch {
		case code == "":
			it.HarmonizedSystemCode = nil
		case !validHSCode(code):
			v.Add(prefix+".harmonized_system_code", "invalid", "must be 6 to 10 digits, optionally separated by dots (e.g. 6109.10.0012)")
		default:
			it.HarmonizedSystemCode = &code
		}
	}
	it.OriginCountry = strings.ToUpper(strings.TrimSpace(it.OriginCountry))
	switch {
	case it.OriginCountry == "":
		v.Add(prefix+".origin_country", "required", "is required")
	case !isUpperAlpha(it.OriginCountry, 2):
		v.Add(prefix+".origin_country", "invalid", "must be a two-letter country code")
	}
	switch {
	case it.Quantity < 1:
		v.Add(prefix+".quantity", "not_positive", "must be at least 1")
	case it.Quantity > MaxCustomsQuantity:
		v.Add(prefix+".quantity", "too_large", fmt.Sprintf("must be at most %d", MaxCustomsQuantity))
	}
	switch {
	case !(it.Value > 0):
		v.Add(prefix+".value", "not_positive", "must be greater than 0")
	case it.Value > MaxCustomsValue:
		v.Add(prefix+".value", "too_large", fmt.Sprintf("must be at most %d", MaxCustomsValue))
	}
	it.WeightUnit = strings.ToUpper(strings.TrimSpace(it.WeightUnit))
	oz, ok := ouncesPer[it.WeightUnit]
	if !ok {
		v.Add(prefix+".weight_unit", "invalid", "must be OZ, LB, G or KG")
	}
	switch {
	case !(it.Weight > 0) || ok && !(it.Weight*oz > 0):
		v.Add(prefix+".weight", "not_positive", "must be greater than 0")
	case ok && !atMost(it.Weight*oz, MaxParcelWeightOz):
		v.Add(prefix+".weight", "too_heavy", "must be at most 150 lb")
	}
}

// validHSCode accepts a Harmonized System code: 6 to 10 digits, optionally grouped by single
// dots that neither start nor end it (6109.10, 6109.10.0012, 610910).
func validHSCode(code string) bool {
	n := 0
	for i := 0; i < len(code); i++ {
		switch c := code[i]; {
		case c >= '0' && c <= '9':
			n++
		case c == '.' && i > 0 && i < len(code)-1 && code[i-1] != '.':
		default:
			return false
		}
	}
	return n >= 6 && n <= 10
}

// DeclaresCustoms reports whether the shipment travels with a customs declaration, which its
// label marks.
func (s *Shipment) DeclaresCustoms() bool { return s.CustomsInfo != nil }
