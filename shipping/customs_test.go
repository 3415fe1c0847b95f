package shipping

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func customsInfo() *CustomsInfo {
	hs, term := "6109.10.0012", "ddp"
	return &CustomsInfo{CustomsSigner: " Jane Doe ", Incoterm: &term, CustomsItems: []CustomsItem{
		{Description: "Cotton T-shirt", HarmonizedSystemCode: &hs, OriginCountry: "us", Quantity: 2, Value: 19.99, Weight: 8, WeightUnit: "oz"},
	}}
}

func TestValidateCustomsInfo(t *testing.T) {
	str := func(s string) *string { return &s }
	item := func(edit func(*CustomsItem)) func(*CustomsInfo) {
		return func(c *CustomsInfo) { edit(&c.CustomsItems[0]) }
	}
	tests := []struct {
		name   string
		edit   func(*CustomsInfo)
		fields []string
	}{
		{"ok", func(*CustomsInfo) {}, nil},
		{"no hs code, no incoterm", func(c *CustomsInfo) { c.Incoterm = nil; c.CustomsItems[0].HarmonizedSystemCode = nil }, nil},
		{"empty hs code and incoterm are absent", func(c *CustomsInfo) { c.Incoterm = str(""); c.CustomsItems[0].HarmonizedSystemCode = str(" ") }, nil},
		{"no items", func(c *CustomsInfo) { c.CustomsItems = nil }, []string{"customs_info.customs_items"}},
		{"100 items", func(c *CustomsInfo) { c.CustomsItems = slices.Repeat(c.CustomsItems, 100) }, nil},
		{"101 items", func(c *CustomsInfo) { c.CustomsItems = slices.Repeat(c.CustomsItems, 101) }, []string{"customs_info.customs_items"}},
		{"no signer", func(c *CustomsInfo) { c.CustomsSigner = "  " }, []string{"customs_info.customs_signer"}},
		{"long signer", func(c *CustomsInfo) { c.CustomsSigner = strings.Repeat("x", 256) }, []string{"customs_info.customs_signer"}},
		{"unknown incoterm", func(c *CustomsInfo) { c.Incoterm = str("FREE") }, []string{"customs_info.incoterm"}},
		{"lower-case incoterm", func(c *CustomsInfo) { c.Incoterm = str("exw") }, nil},
		{"empty item", func(c *CustomsInfo) { c.CustomsItems = []CustomsItem{{}} }, []string{
			"customs_info.customs_items[0].description", "customs_info.customs_items[0].origin_country",
			"customs_info.customs_items[0].quantity", "customs_info.customs_items[0].value",
			"customs_info.customs_items[0].weight_unit", "customs_info.customs_items[0].weight"}},
		{"second item", func(c *CustomsInfo) {
			c.CustomsItems = append(c.CustomsItems, c.CustomsItems[0])
			c.CustomsItems[1].Quantity = 0
		},
			[]string{"customs_info.customs_items[1].quantity"}},
		{"three-letter country", item(func(it *CustomsItem) { it.OriginCountry = "USA" }), []string{"customs_info.customs_items[0].origin_country"}},
		{"digits for a country", item(func(it *CustomsItem) { it.OriginCountry = "12" }), []string{"customs_info.customs_items[0].origin_country"}},
		{"negative quantity", item(func(it *CustomsItem) { it.Quantity = -1 }), []string{"customs_info.customs_items[0].quantity"}},
		{"huge quantity", item(func(it *CustomsItem) { it.Quantity = 1_000_001 }), []string{"customs_info.customs_items[0].quantity"}},
		{"zero value", item(func(it *CustomsItem) { it.Value = 0 }), []string{"customs_info.customs_items[0].value"}},
		{"huge value", item(func(it *CustomsItem) { it.Value = 1_000_000.01 }), []string{"customs_info.customs_items[0].value"}},
		{"zero weight", item(func(it *CustomsItem) { it.Weight = 0 }), []string{"customs_info.customs_items[0].weight"}},
		{"too heavy", item(func(it *CustomsItem) { it.Weight, it.WeightUnit = 70, "KG" }), []string{"customs_info.customs_items[0].weight"}},
		{"unknown unit", item(func(it *CustomsItem) { it.WeightUnit = "STONE" }), []string{"customs_info.customs_items[0].weight_unit"}},
		{"long description", item(func(it *CustomsItem) { it.Description = strings.Repeat("x", 256) }), []string{"customs_info.customs_items[0].description"}},
		{"hs code 6 digits", item(func(it *CustomsItem) { it.HarmonizedSystemCode = str("610910") }), nil},
		{"hs code 10 digits", item(func(it *CustomsItem) { it.HarmonizedSystemCode = str("6109100012") }), nil},
		{"hs code 5 digits", item(func(it *CustomsItem) { it.HarmonizedSystemCode = str("6109.1") }), []string{"customs_info.customs_items[0].harmonized_system_code"}},
		{"hs code 11 digits", item(func(it *CustomsItem) { it.HarmonizedSystemCode = str("6109.10.00123") }), []string{"customs_info.customs_items[0].harmonized_system_code"}},
		{"hs code letters", item(func(it *CustomsItem) { it.HarmonizedSystemCode = str("6109.AB.0012") }), []string{"customs_info.customs_items[0].harmonized_system_code"}},
		{"hs code leading dot", item(func(it *CustomsItem) { it.HarmonizedSystemCode = str(".610910") }), []string{"customs_info.customs_items[0].harmonized_system_code"}},
		{"hs code double dot", item(func(it *CustomsItem) { it.HarmonizedSystemCode = str("6109..10") }), []string{"customs_info.customs_items[0].harmonized_system_code"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := shipmentRequest("90058", "CA", "10001", "NY")
			r.CustomsInfo = customsInfo()
			tt.edit(r.CustomsInfo)
			_, err := r.Validate(testDay)
			var got []string
			var ve *ValidationError
			if errors.As(err, &ve) {
				for _, f := range ve.Fields {
					got = append(got, f.Field)
				}
			} else if err != nil {
				t.Fatalf("Validate = %v", err)
			}
			if !slices.Equal(got, tt.fields) {
				t.Errorf("Validate fields = %v; want %v", got, tt.fields)
			}
		})
	}
}

func TestValidateCustomsInfoNormalizes(t *testing.T) {
	r := shipmentRequest("90058", "CA", "10001", "NY")
	r.CustomsInfo = customsInfo()
	if _, err := r.Validate(testDay); err != nil {
		t.Fatal(err)
	}
	c := r.CustomsInfo
	if it := c.CustomsItems[0]; c.CustomsSigner != "Jane Doe" || *c.Incoterm != "DDP" || it.OriginCountry != "US" || it.WeightUnit != "OZ" {
		t.Errorf("Validate left customs_info %+v, item %+v; want it trimmed and upper-cased", c, it)
	}
}
