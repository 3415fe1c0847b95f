package customs

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// validDeclaration is a declaration of three lines that passes Validate("US", 48).
func validDeclaration() Declaration {
	return Declaration{
		CustomsSigner: "Ada Lovelace",
		CustomsItems: []Item{
			{Description: "Cotton T-shirt", HarmonizedSystemCode: ptr("6109.10"), OriginCountry: "US", Quantity: 2, Value: 25, Weight: 8, WeightUnit: "OZ"},
			{Description: "Wool scarf", HarmonizedSystemCode: ptr("6117100000"), OriginCountry: "GB", Quantity: 1, Value: 40, Weight: 0.25, WeightUnit: "LB"},
			{Description: "Leather wallet", HarmonizedSystemCode: ptr("4202.31.6000"), OriginCountry: "IT", Quantity: 1, Value: 60, Weight: 150, WeightUnit: "G"},
		},
	}
}

func TestValidateNormalizes(t *testing.T) {
	d := Declaration{
		CustomsSigner:     "  Ada Lovelace ",
		ContentsType:      "gift",
		NonDeliveryOption: " abandon",
		Incoterm:          ptr("ddp"),
		AESITN:            " aes x20260115123456 ",
		CustomsItems: []Item{{Description: " Cotton T-shirt ", HarmonizedSystemCode: ptr(" 6109.10.0012 "),
			OriginCountry: " us", Quantity: 2, Value: 25, Weight: 0.5, WeightUnit: "kg"}},
	}
	if errs := d.Validate("US", 32); errs != nil {
		t.Fatalf("Validate() = %v; want no errors", errs)
	}
	it := d.CustomsItems[0]
	if d.CustomsSigner != "Ada Lovelace" || d.ContentsType != "GIFT" || d.NonDeliveryOption != "ABANDON" || *d.Incoterm != "DDP" ||
		d.AESITN != "AES X20260115123456" || it.Description != "Cotton T-shirt" || *it.HarmonizedSystemCode != "6109100012" ||
		it.OriginCountry != "US" || it.WeightUnit != "KG" {
		t.Errorf("Validate() left %+v, item %+v (HS %q)", d, it, *it.HarmonizedSystemCode)
	}

	d = validDeclaration()
	if errs := d.Validate("US", 48); errs != nil {
		t.Fatalf("Validate() = %v; want no errors", errs)
	}
	if d.ContentsType != ContentsMerchandise || d.NonDeliveryOption != NonDeliveryReturn || d.Incoterm == nil || *d.Incoterm != IncotermDAP {
		t.Errorf("defaults = %q, %q, %v; want MERCHANDISE, RETURN, DAP", d.ContentsType, d.NonDeliveryOption, d.Incoterm)
	}
	if got := d.ExportStatement(); got != "NOEEI 30.37(a)" {
		t.Errorf("ExportStatement() = %q; want the exemption NOEEI 30.37(a)", got)
	}
	if got := d.TotalValueCents(); got != 125_00 {
		t.Errorf("TotalValueCents() = %d; want 12500", got)
	}
	if got := d.WeightOz(); math.Abs(got-(8+4+150/28.349523125)) > 1e-9 {
		t.Errorf("WeightOz() = %v; want 17.29", got)
	}
}

func TestValidateRejects(t *testing.T) {
	item := func(i int, f func(*Item)) func(*Declaration) {
		return func(d *Declaration) { f(&d.CustomsItems[i]) }
	}
	type fe struct{ field, code string }
	const p = "customs_info."
	for _, tc := range []struct {
		name     string
		from     string
		parcelOz float64
		change   func(*Declaration)
		want     []fe
	}{
		{"no items", "US", 48, func(d *Declaration) { d.CustomsItems = nil }, []fe{{p + "customs_items", "required"}}},
		{"101 items", "US", 48, func(d *Declaration) {
			d.CustomsItems = make([]Item, 101)
		}, []fe{{p + "customs_items", "too_many"}}},
		{"no description", "US", 48, item(2, func(it *Item) { it.Description = " " }), []fe{{p + "customs_items[2].description", "required"}}},
		{"long description", "US", 48, item(0, func(it *Item) { it.Description = strings.Repeat("é", 101) }), []fe{{p + "customs_items[0].description", "too_long"}}},
		{"control character", "US", 48, item(0, func(it *Item) { it.Description = "a\x00b" }), []fe{{p + "customs_items[0].description", "invalid"}}},
		{"no HS code", "US", 48, item(2, func(it *Item) { it.HarmonizedSystemCode = nil }), []fe{{p + "customs_items[2].harmonized_system_code", "required"}}},
		{"empty HS code", "US", 48, item(2, func(it *Item) { it.HarmonizedSystemCode = ptr(" ") }), []fe{{p + "customs_items[2].harmonized_system_code", "required"}}},
		{"HS code of 4 digits", "US", 48, item(2, func(it *Item) { it.HarmonizedSystemCode = ptr("6109") }), []fe{{p + "customs_items[2].harmonized_system_code", "invalid"}}},
		{"HS code of 5 digits with dots", "US", 48, item(2, func(it *Item) { it.HarmonizedSystemCode = ptr("61.09.1") }), []fe{{p + "customs_items[2].harmonized_system_code", "invalid"}}},
		{"HS code of 11 digits", "US", 48, item(2, func(it *Item) { it.HarmonizedSystemCode = ptr("61091000123") }), []fe{{p + "customs_items[2].harmonized_system_code", "invalid"}}},
		{"HS code with a letter", "US", 48, item(2, func(it *Item) { it.HarmonizedSystemCode = ptr("6109.1A") }), []fe{{p + "customs_items[2].harmonized_system_code", "invalid"}}},
		{"no origin", "US", 48, item(1, func(it *Item) { it.OriginCountry = "" }), []fe{{p + "customs_items[1].origin_country", "required"}}},
		{"unknown origin", "US", 48, item(1, func(it *Item) { it.OriginCountry = "XX" }), []fe{{p + "customs_items[1].origin_country", "invalid"}}},
		{"alpha-3 origin", "US", 48, item(1, func(it *Item) { it.OriginCountry = "USA" }), []fe{{p + "customs_items[1].origin_country", "invalid"}}},
		{"zero quantity", "US", 48, item(0, func(it *Item) { it.Quantity = 0 }), []fe{{p + "customs_items[0].quantity", "not_positive"}}},
		{"negative quantity", "US", 48, item(0, func(it *Item) { it.Quantity = -1 }), []fe{{p + "customs_items[0].quantity", "not_positive"}}},
		{"huge quantity", "US", 48, item(0, func(it *Item) { it.Quantity = MaxQuantity + 1 }), []fe{{p + "customs_items[0].quantity", "too_large"}}},
		{"zero value", "US", 48, item(0, func(it *Item) { it.Value = 0 }), []fe{{p + "customs_items[0].value", "not_positive"}}},
		{"negative value", "US", 48, item(0, func(it *Item) { it.Value = -5 }), []fe{{p + "customs_items[0].value", "not_positive"}}},
		{"value below a cent", "US", 48, item(0, func(it *Item) { it.Value = 0.004 }), []fe{{p + "customs_items[0].value", "not_positive"}}},
		{"NaN value", "US", 48, item(0, func(it *Item) { it.Value = math.NaN() }), []fe{{p + "customs_items[0].value", "not_positive"}}},
		{"huge value", "CA", 48, item(0, func(it *Item) { it.Value = MaxValue + 1 }), []fe{{p + "customs_items[0].value", "too_large"}}},
		{"zero weight", "US", 48, item(0, func(it *Item) { it.Weight = 0 }), []fe{{p + "customs_items[0].weight", "not_positive"}}},
		{"negative weight", "US", 48, item(0, func(it *Item) { it.Weight = -1 }), []fe{{p + "customs_items[0].weight", "not_positive"}}},
		{"unknown weight unit", "US", 48, item(0, func(it *Item) { it.WeightUnit = "STONE" }), []fe{{p + "customs_items[0].weight_unit", "invalid"}}},
		{"items heavier than the parcel", "US", 17, nil, []fe{{p + "customs_items", "too_heavy"}}},
		{"no signer", "US", 48, func(d *Declaration) { d.CustomsSigner = "  " }, []fe{{p + "customs_signer", "required"}}},
		{"long signer", "US", 48, func(d *Declaration) { d.CustomsSigner = strings.Repeat("x", 256) }, []fe{{p + "customs_signer", "too_long"}}},
		{"unknown contents type", "US", 48, func(d *Declaration) { d.ContentsType = "BRIBE" }, []fe{{p + "contents_type", "invalid"}}},
		{"unknown non-delivery option", "US", 48, func(d *Declaration) { d.NonDeliveryOption = "BURN" }, []fe{{p + "non_delivery_option", "invalid"}}},
		{"incoterm other than DAP or DDP", "US", 48, func(d *Declaration) { d.Incoterm = ptr("EXW") }, []fe{{p + "incoterm", "invalid"}}},
		{"one $3,000 line without ITN", "US", 48, item(0, func(it *Item) { it.Value = 3000 }), []fe{{p + "aes_itn", "required"}}},
		{"two lines of one HS code over $2,500", "US", 48, func(d *Declaration) {
			d.CustomsItems[0].Value, d.CustomsItems[1].Value = 1250, 1250.01
			d.CustomsItems[1].HarmonizedSystemCode = ptr("610910")
		}, []fe{{p + "aes_itn", "required"}}},
		{"malformed ITN", "US", 48, func(d *Declaration) { d.AESITN = "AES 123" }, []fe{{p + "aes_itn", "invalid"}}},
		{"ITN without AES", "US", 48, func(d *Declaration) { d.AESITN = "X20260115123456" }, []fe{{p + "aes_itn", "invalid"}}},
		{"ITN of 13 digits", "US", 48, func(d *Declaration) { d.AESITN = "AES X2026011512345" }, []fe{{p + "aes_itn", "invalid"}}},
		{"malformed ITN over $2,500", "US", 48, func(d *Declaration) {
			d.CustomsItems[0].Value, d.AESITN = 3000, "AES Y20260115123456"
		}, []fe{{p + "aes_itn", "invalid"}}},
		{"every kind at once", "US", 48, func(d *Declaration) {
			d.CustomsSigner, d.ContentsType = "", "X"
			d.CustomsItems[1] = Item{}
		}, []fe{{p + "customs_items[1].description", "required"}, {p + "customs_items[1].harmonized_system_code", "required"},
			{p + "customs_items[1].origin_country", "required"}, {p + "customs_items[1].quantity", "not_positive"},
			{p + "customs_items[1].value", "not_positive"}, {p + "customs_items[1].weight_unit", "invalid"},
			{p + "customs_items[1].weight", "not_positive"}, {p + "customs_signer", "required"}, {p + "contents_type", "invalid"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := validDeclaration()
			if tc.change != nil {
				tc.change(&d)
			}
			var got []fe
			for _, e := range d.Validate(tc.from, tc.parcelOz) {
				if e.Message == "" {
					t.Errorf("%s %s has no message", e.Field, e.Code)
				}
				got = append(got, fe{e.Field, e.Code})
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Validate(%q, %v) = %v; want %v", tc.from, tc.parcelOz, got, tc.want)
			}
		})
	}
}

// TestUSExportRule: more than $2,500 under one HS code needs an AES ITN on an export from the
// US, and the documents then print it; otherwise they print the exemption.
func TestUSExportRule(t *testing.T) {
	for _, tc := range []struct {
		name      string
		from      string
		values    [3]float64
		hs        [3]string
		itn       string
		wantError bool
		statement string
	}{
		{"$2,500.00 exactly", "US", [3]float64{2500, 10, 10}, [3]string{"610910", "611710", "420231"}, "", false, Exemption},
		{"$2,500.01", "US", [3]float64{2500.01, 10, 10}, [3]string{"610910", "611710", "420231"}, "", true, ""},
		{"$2,000 under each of two codes", "US", [3]float64{2000, 2000, 10}, [3]string{"610910", "611710", "420231"}, "", false, Exemption},
		{"$1,500 twice under one code", "US", [3]float64{1500, 1500, 10}, [3]string{"610910", "611710", "6109.10"}, "", false, Exemption},
		{"$1,500 twice under one code, dots apart", "US", [3]float64{1500, 10, 1500}, [3]string{"6109.10", "611710", "610910"}, "", true, ""},
		{"$3,000 with an ITN", "US", [3]float64{3000, 10, 10}, [3]string{"610910", "611710", "420231"}, "AES X20260115123456", false, "AES X20260115123456"},
		{"$3,000 from Canada", "CA", [3]float64{3000, 10, 10}, [3]string{"610910", "611710", "420231"}, "", false, Exemption},
		{"an ITN under $2,500", "US", [3]float64{10, 10, 10}, [3]string{"610910", "611710", "420231"}, "AES X20260115123456", false, "AES X20260115123456"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := validDeclaration()
			d.AESITN = tc.itn
			for i := range d.CustomsItems {
				d.CustomsItems[i].Value, d.CustomsItems[i].HarmonizedSystemCode = tc.values[i], ptr(tc.hs[i])
			}
			errs := d.Validate(tc.from, 48)
			if got := len(errs) == 1 && errs[0].Field == "customs_info.aes_itn" && errs[0].Code == "required"; got != tc.wantError || !got && errs != nil {
				t.Fatalf("Validate(%q) = %v; want the ITN required: %v", tc.from, errs, tc.wantError)
			}
			if !tc.wantError {
				if got := d.ExportStatement(); got != tc.statement {
					t.Errorf("ExportStatement() = %q; want %q", got, tc.statement)
				}
			} else if !strings.Contains(errs[0].Message, "610910") {
				t.Errorf("message %q does not name the HS code 610910", errs[0].Message)
			}
		})
	}
}

func TestValidITN(t *testing.T) {
	for _, tc := range []struct {
		itn  string
		want bool
	}{
		{"AES X20260115123456", true},
		{"AES X00000000000000", true},
		{"AES X2026011512345", false},
		{"AES X202601151234567", false},
		{"AES x20260115123456", false}, // Validate upper-cases first
		{"X20260115123456", false},
		{"AES  X20260115123456", false},
		{"AES X2026011512345A", false},
		{"", false},
	} {
		if got := ValidITN(tc.itn); got != tc.want {
			t.Errorf("ValidITN(%q) = %v; want %v", tc.itn, got, tc.want)
		}
	}
}

func TestForm(t *testing.T) {
	lines := func(n int, value float64) Declaration {
		var d Declaration
		for range n {
			d.CustomsItems = append(d.CustomsItems, Item{Description: "Cotton T-shirt", HarmonizedSystemCode: ptr("610910"),
				OriginCountry: "US", Quantity: 1, Value: value / float64(n), Weight: 1, WeightUnit: "OZ"})
		}
		return d
	}
	for _, tc := range []struct {
		name     string
		d        Declaration
		parcelOz float64
		want     string
	}{
		{"small and light", lines(1, 399.99), 63.9, FormCN22},
		{"$400.00", lines(1, 400), 16, FormCN23},
		{"4 lb", lines(1, 50), 64, FormCN23},
		{"over 4 lb", lines(1, 50), 100, FormCN23},
		{"ten short lines", lines(10, 100), 32, FormCN22},
		{"forty lines: more than the CN22's page holds", lines(40, 100), 60, FormCN23},
	} {
		if got := tc.d.Form(tc.parcelOz); got != tc.want {
			t.Errorf("%s: Form(%v) = %s; want %s", tc.name, tc.parcelOz, got, tc.want)
		}
	}
}
