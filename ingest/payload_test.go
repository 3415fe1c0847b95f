package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/waybill/waybill/shipping"
)

func TestCents(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"0", 0, false},
		{"19.99", 1999, false},
		{"12.5", 1250, false},
		{"1.005", 101, false}, // exact decimal: a float would give 100
		{"11.245", 1125, false},
		{"11.244999", 1124, false},
		{"0.004", 0, false},
		{"0.005", 1, false},
		{"7", 700, false},
		{"1e2", 10000, false},
		{"1.5E-2", 2, false},
		{"25e-4", 0, false},
		{"5e-3", 1, false},
		{"1e-70", 0, true},
		{"-0.00", 0, false},
		{"999999999999.99", 99999999999999, false},
		{"1000000000000", 0, true},
		{"1e12", 0, true},
		{"-1", 0, true},
		{"1/3", 0, true},
		{"", 0, true},
		{"1.", 0, true},
		{".5", 0, true},
		{"NaN", 0, true},
		{"1e999999999", 0, true},
	}
	for _, tt := range tests {
		got, err := Cents(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("Cents(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestPeekOrderID(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		body    string
		want    *string
		wantErr bool
	}{
		{`{"id":"A-1"}`, str("A-1"), false},
		{`{"id":" A-1 "}`, str("A-1"), false},
		{`{"id":12345}`, str("12345"), false},
		{`{"id":1.5e3}`, str("1.5e3"), false},
		{`{"id":""}`, nil, false},
		{`{"id":null}`, nil, false},
		{`{"id":{"x":1}}`, nil, false},
		{`{"id":"` + strings.Repeat("x", 256) + `"}`, nil, false},
		{`{}`, nil, false},
		{` {"name":"x"} `, nil, false},
		{`[]`, nil, true},
		{`null`, nil, true},
		{`"x"`, nil, true},
		{`{"id":"x"}{}`, nil, true},
		{`{"id":"x"`, nil, true},
		{"{\"id\":\"\xff\"}", nil, true},
		{``, nil, true},
		{`   `, nil, true},
		{`{"a":{"id":"inner"},"b":["id",{"id":1}]}`, nil, false},
		{`{"a":{"id":"inner"}, "id" : "outer" }`, str("outer"), false},
		{`{"ID":"x"}`, nil, false},
		{`{"\u0069d":"esc"}`, str("esc"), false},
		{`{"id":"first","id":"last"}`, nil, true},
		{`{"id":"x","\u0069d":"y"}`, nil, true},
		{`{"id":"x","items":[{"sku":1},{"sku":2,"q":1,"sku":3}]}`, nil, true},
		{`{"id":"x","a":{"b":{"c":1,"c":2}}}`, nil, true},
		{`{"id":"x","a":{"k":1},"b":{"k":1},"c":[{"k":1},{"k":1}]}`, str("x"), false},
		{`{"id":"SUR\ud800-X"}`, nil, true},
		{`{"id":"x","tags":["\udfff"]}`, nil, true},
		{`{"id":"\ud83d\ude00"}`, str("😀"), false},
		{`{"note":"\"id\":\"no\"","id":"yes"}`, str("yes"), false},
		{"{\n\t\"id\"\r\n:\t-2.5E+3\n}", str("-2.5E+3"), false},
		{`{"id":true}`, nil, false},
		{`{"id":["x"]}`, nil, false},
		{`{"x":null,"id":"\u00e9"}`, str("é"), false},
	}
	for _, tt := range tests {
		got, err := PeekOrderID([]byte(tt.body))
		if (err != nil) != tt.wantErr || !equalPtr(got, tt.want) {
			t.Errorf("PeekOrderID(%q) = %v, %v; want %v, error %v", tt.body, deref(got), err, deref(tt.want), tt.wantErr)
		}
	}
}

func equalPtr(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// validOrder is a minimal valid payload; mutate edits its decoded form.
func validOrder(t *testing.T, mutate func(o map[string]any)) []byte {
	t.Helper()
	const base = `{"id":"O-1","fulfillmentOrders":[{"id":"FO-1","destination":{"firstName":"Ann","lastName":"Lee",
		"address1":"1 Main St","city":"Austin","province":"TX","zip":"78701","countryCode":"us"},
		"lineItems":[{"id":"LI-1","weight":{"unit":"POUNDS","value":2},"totalQuantity":3}]}]}`
	var o map[string]any
	if err := json.Unmarshal([]byte(base), &o); err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(o)
	}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fo(o map[string]any) map[string]any {
	return o["fulfillmentOrders"].([]any)[0].(map[string]any)
}

func item(o map[string]any) map[string]any {
	return fo(o)["lineItems"].([]any)[0].(map[string]any)
}

// repeat is an array of n copies of v.
func repeat(v any, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func dest(o map[string]any) map[string]any { return fo(o)["destination"].(map[string]any) }

func TestParseOrderValid(t *testing.T) {
	o, err := ParseOrder(validOrder(t, nil))
	if err != nil {
		t.Fatalf("ParseOrder(valid) = %v", err)
	}
	want := Address{Name: "Ann Lee", Street1: "1 Main St", City: "Austin", State: "TX", Zip: "78701", Country: "US"}
	if got := o.FulfillmentOrders[0].Destination; got != want {
		t.Errorf("destination = %+v; want %+v", got, want)
	}
	li := o.FulfillmentOrders[0].LineItems[0]
	if li.WeightOz == nil || *li.WeightOz != 32 || li.Quantity != 3 || li.RemainingQuantity != 3 || !li.RequiresShipping {
		t.Errorf("line item = %+v; want 32 oz, quantity 3, remaining 3, requires shipping", li)
	}
	// A quantity may be written as a string or with a zero fraction, as prices may.
	for _, q := range []any{"3", json.Number("3.0"), json.Number("3e0")} {
		o, err := ParseOrder(validOrder(t, func(o map[string]any) { item(o)["totalQuantity"] = q }))
		if err != nil {
			t.Errorf("totalQuantity %v: %v", q, err)
		} else if n := o.FulfillmentOrders[0].LineItems[0].Quantity; n != 3 {
			t.Errorf("totalQuantity %v: quantity %d; want 3", q, n)
		}
	}
	if got := o.FulfillmentOrders[0].WeightOz; got != 96 {
		t.Errorf("fulfillment order weight = %v; want 96", got)
	}
	if o.OrderID != "O-1" || o.Tags == nil || o.ShippingAddress != nil {
		t.Errorf("order = %+v; want id O-1, empty tags, no shipping address", o)
	}
}

func TestParseOrderWeights(t *testing.T) {
	tests := []struct {
		unit  string
		value any
		want  float64
	}{
		{"POUNDS", 1, 16},
		{"pounds", 0.5, 8},
		{"OUNCES", 3.333, 3.33},
		{"KILOGRAMS", 1, 35.27},
		{"KILOGRAMS", 2.5, 88.18},
		{"GRAMS", 100, 3.53},
		{"GRAMS", 453.59237, 16},
		{"OUNCES", "4.5", 4.5},
	}
	for _, tt := range tests {
		body := validOrder(t, func(o map[string]any) {
			item(o)["weight"] = map[string]any{"unit": tt.unit, "value": tt.value}
		})
		o, err := ParseOrder(body)
		if err != nil {
			t.Errorf("ParseOrder(%v %s) = %v", tt.value, tt.unit, err)
			continue
		}
		if got := o.FulfillmentOrders[0].LineItems[0].WeightOz; got == nil || math.Abs(*got-tt.want) > 1e-9 {
			t.Errorf("weight of %v %s = %v oz; want %v", tt.value, tt.unit, got, tt.want)
		}
	}
}

func TestParseOrderPrices(t *testing.T) {
	money := func(amount any, cur string) map[string]any {
		return map[string]any{"shopMoney": map[string]any{"amount": amount, "currencyCode": cur}}
	}
	body := validOrder(t, func(o map[string]any) {
		item(o)["variant"] = map[string]any{"price": 30}
		item(o)["financialSummaries"] = map[string]any{
			"originalUnitPriceSet":              money("19.99", "eur"),
			"approximateDiscountedUnitPriceSet": money(17.995, "EUR"),
		}
	})
	o, err := ParseOrder(body)
	if err != nil {
		t.Fatal(err)
	}
	li := o.FulfillmentOrders[0].LineItems[0]
	if li.UnitPriceCents == nil || *li.UnitPriceCents != 1999 || li.DiscountedUnitPriceCents == nil || *li.DiscountedUnitPriceCents != 1800 || li.Currency != "EUR" {
		t.Errorf("prices = %v, %v %s; want 1999, 1800 EUR", deref64(li.UnitPriceCents), deref64(li.DiscountedUnitPriceCents), li.Currency)
	}
	// Without financial summaries the variant's price applies.
	o, err = ParseOrder(validOrder(t, func(o map[string]any) { item(o)["variant"] = map[string]any{"price": 30} }))
	if err != nil {
		t.Fatal(err)
	}
	if got := o.FulfillmentOrders[0].LineItems[0].UnitPriceCents; got == nil || *got != 3000 {
		t.Errorf("unit price from variant.price 30 = %v; want 3000", deref64(got))
	}
}

func deref64(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestParseOrderInvalid(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(o map[string]any)
		want   []string // field: code
	}{
		{"no id", func(o map[string]any) { delete(o, "id") }, []string{"id: required"}},
		{"empty id", func(o map[string]any) { o["id"] = "  " }, []string{"id: required"}},
		{"id of the wrong type", func(o map[string]any) { o["id"] = true }, []string{"id: invalid_type"}},
		{"long id", func(o map[string]any) { o["id"] = strings.Repeat("x", 256) }, []string{"id: too_long"}},
		{"no fulfillment orders", func(o map[string]any) { delete(o, "fulfillmentOrders") }, []string{"fulfillmentOrders: required"}},
		{"empty fulfillment orders", func(o map[string]any) { o["fulfillmentOrders"] = []any{} }, []string{"fulfillmentOrders: required"}},
		{"fulfillment orders not an array", func(o map[string]any) { o["fulfillmentOrders"] = "x" }, []string{"fulfillmentOrders: invalid_type"}},
		{"no destination", func(o map[string]any) { delete(fo(o), "destination") }, []string{"fulfillmentOrders[0].destination: required"}},
		{"empty destination", func(o map[string]any) { fo(o)["destination"] = map[string]any{} },
			[]string{"fulfillmentOrders[0].destination: required"}},
		{"blank destination", func(o map[string]any) { fo(o)["destination"] = map[string]any{"zip": " ", "city": nil} },
			[]string{"fulfillmentOrders[0].destination: required"}},
		{"destination not an object", func(o map[string]any) { fo(o)["destination"] = "home" },
			[]string{"fulfillmentOrders[0].destination: invalid_type"}},
		// Only id, a fulfillment order, its destination and line items are
		// mandatory: a destination's fields are optional (type-checked when present).
		{"no zip", func(o map[string]any) { delete(dest(o), "zip") }, nil},
		{"no street, city, country", func(o map[string]any) {
			delete(dest(o), "address1")
			delete(dest(o), "city")
			delete(dest(o), "countryCode")
		}, nil},
		{"US without a state", func(o map[string]any) { delete(dest(o), "province") }, nil},
		{"abroad without a state", func(o map[string]any) { delete(dest(o), "province"); dest(o)["countryCode"] = "DE" }, nil},
		{"company instead of a name", func(o map[string]any) {
			delete(dest(o), "firstName")
			delete(dest(o), "lastName")
			dest(o)["company"] = "Initech"
		}, nil},
		{"no name", func(o map[string]any) { delete(dest(o), "firstName"); delete(dest(o), "lastName") }, nil},
		{"bad country code", func(o map[string]any) { dest(o)["countryCode"] = "USA" },
			[]string{"fulfillmentOrders[0].destination.countryCode: invalid"}},
		{"zip of the wrong type", func(o map[string]any) { dest(o)["zip"] = 78701 },
			[]string{"fulfillmentOrders[0].destination.zip: invalid_type"}},
		{"no line items", func(o map[string]any) { delete(fo(o), "lineItems") }, []string{"fulfillmentOrders[0].lineItems: required"}},
		{"unknown weight unit", func(o map[string]any) { item(o)["weight"] = map[string]any{"unit": "STONES", "value": 1} },
			[]string{"fulfillmentOrders[0].lineItems[0].weight.unit: invalid"}},
		{"negative weight", func(o map[string]any) { item(o)["weight"] = map[string]any{"unit": "OUNCES", "value": -1} },
			[]string{"fulfillmentOrders[0].lineItems[0].weight.value: out_of_range"}},
		{"weight without a value", func(o map[string]any) { item(o)["weight"] = map[string]any{"unit": "OUNCES"} },
			[]string{"fulfillmentOrders[0].lineItems[0].weight.value: required"}},
		{"quantity as a string", func(o map[string]any) { item(o)["totalQuantity"] = " 2 " }, nil},
		{"quantity written 2.0", func(o map[string]any) { item(o)["totalQuantity"] = json.Number("2.0") }, nil},
		{"fractional quantity", func(o map[string]any) { item(o)["totalQuantity"] = "1.5" },
			[]string{"fulfillmentOrders[0].lineItems[0].totalQuantity: invalid"}},
		{"quantity not a number", func(o map[string]any) { item(o)["totalQuantity"] = "two" },
			[]string{"fulfillmentOrders[0].lineItems[0].totalQuantity: invalid_type"}},
		{"zero quantity", func(o map[string]any) { item(o)["totalQuantity"] = 0 },
			[]string{"fulfillmentOrders[0].lineItems[0].totalQuantity: out_of_range"}},
		{"remaining above total", func(o map[string]any) { item(o)["remainingQuantity"] = 4 },
			[]string{"fulfillmentOrders[0].lineItems[0].remainingQuantity: out_of_range"}},
		{"negative price", func(o map[string]any) { item(o)["variant"] = map[string]any{"price": -1} },
			[]string{"fulfillmentOrders[0].lineItems[0].variant.price: invalid"}},
		{"bad currency", func(o map[string]any) {
			item(o)["financialSummaries"] = map[string]any{"originalUnitPriceSet": map[string]any{"shopMoney": map[string]any{"amount": 1, "currencyCode": "DOLLAR"}}}
		}, []string{"fulfillmentOrders[0].lineItems[0].financialSummaries.originalUnitPriceSet.shopMoney.currencyCode: invalid"}},
		{"second line item bad", func(o map[string]any) {
			fo(o)["lineItems"] = append(fo(o)["lineItems"].([]any), map[string]any{"id": "LI-2", "requiresShipping": "no"})
		}, []string{"fulfillmentOrders[0].lineItems[1].requiresShipping: invalid_type"}},
		{"shipping address type-checked only", func(o map[string]any) {
			o["shippingAddress"] = map[string]any{"latitude": "north", "countryCodeV2": "USA"}
		}, []string{"shippingAddress.countryCodeV2: invalid", "shippingAddress.latitude: invalid_type"}},
		{"unknown fields ignored", func(o map[string]any) { o["somethingNew"] = []any{1, 2}; item(o)["extra"] = true }, nil},
		{"line items at their bound", func(o map[string]any) { fo(o)["lineItems"] = repeat(item(o), maxLineItems) }, nil},
		{"too many line items, all bad: one error", func(o map[string]any) { fo(o)["lineItems"] = repeat("x", maxLineItems+1) },
			[]string{"fulfillmentOrders[0].lineItems: too_many"}},
		{"too many fulfillment orders, all bad: one error", func(o map[string]any) { o["fulfillmentOrders"] = repeat(7, maxFulfillmentOrders+1) },
			[]string{"fulfillmentOrders: too_many"}},
		{"too many tags", func(o map[string]any) { o["tags"] = repeat(1, maxTags+1) }, []string{"tags: too_many"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseOrder(validOrder(t, tt.mutate))
			var got []string
			var v *shipping.ValidationError
			if errors.As(err, &v) {
				for _, f := range v.Fields {
					got = append(got, f.Field+": "+f.Code)
				}
			} else if err != nil {
				t.Fatalf("ParseOrder = %v; want a validation error", err)
			}
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("ParseOrder errors = %q; want %q", got, want)
			}
		})
	}
}

func TestProcess(t *testing.T) {
	c := Claim{ID: "imp-1", AccountID: "acct-1", Body: validOrder(t, nil), Attempts: 1}
	o, errs := Process(c, 10)
	if o == nil || errs != nil || o.ImportID != "imp-1" || o.AccountID != "acct-1" {
		t.Errorf("Process(valid) = %+v, %v; want the order of imp-1 for acct-1", o, errs)
	}
	c.Attempts = 11
	if o, errs := Process(c, 10); o != nil || len(errs) != 1 || errs[0].Code != "too_many_attempts" {
		t.Errorf("Process(after 11 attempts) = %v, %v; want too_many_attempts", o, errs)
	}
	c.Attempts, c.Body = 1, []byte(`[]`)
	if o, errs := Process(c, 10); o != nil || len(errs) != 1 || errs[0].Code != "malformed_json" {
		t.Errorf("Process([]) = %v, %v; want malformed_json", o, errs)
	}
}

// FuzzParseOrder: the decoder and normalizer never panic; they either return an order that
// meets the mandatory rules with normalized values, or field errors, never both or neither.
func FuzzParseOrder(f *testing.F) {
	f.Add([]byte(`{"id":"O-1","fulfillmentOrders":[{"destination":{"firstName":"A","address1":"1 Main","city":"X","province":"TX","zip":"78701","countryCode":"US"},"lineItems":[{"weight":{"unit":"GRAMS","value":1e3},"variant":{"price":"1.005"},"totalQuantity":2}]}]}`))
	f.Add([]byte(`{"id":1,"fulfillmentOrders":[{"lineItems":[null,"x",{"weight":{"unit":"KILOGRAMS","value":"1e400"}}]}]}`))
	f.Add([]byte(`{"id":"x","tags":[1,"a"],"shippingAddress":{"latitude":1e309}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte("{\"id\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := ParseOrder(body)
		if err != nil {
			var v *shipping.ValidationError
			if !errors.As(err, &v) || len(v.Fields) == 0 {
				t.Fatalf("ParseOrder(%q) = %v; want a validation error with fields", body, err)
			}
			return
		}
		if o.OrderID == "" || len(o.FulfillmentOrders) == 0 {
			t.Fatalf("ParseOrder(%q) accepted an order without id or fulfillment orders: %+v", body, o)
		}
		for _, f := range o.FulfillmentOrders {
			if len(f.LineItems) == 0 || f.Destination.Zip == "" || f.Destination.Street1 == "" || len(f.Destination.Country) != 2 {
				t.Fatalf("ParseOrder(%q) accepted an incomplete fulfillment order: %+v", body, f)
			}
			if math.IsNaN(f.WeightOz) || math.IsInf(f.WeightOz, 0) || f.WeightOz < 0 {
				t.Fatalf("ParseOrder(%q): fulfillment order weight %v", body, f.WeightOz)
			}
			for _, li := range f.LineItems {
				if li.WeightOz != nil && (*li.WeightOz < 0 || math.IsNaN(*li.WeightOz)) {
					t.Fatalf("ParseOrder(%q): line item weight %v", body, *li.WeightOz)
				}
				if li.UnitPriceCents != nil && *li.UnitPriceCents < 0 || li.Quantity < 1 {
					t.Fatalf("ParseOrder(%q): line item %+v", body, li)
				}
			}
		}
		if _, err := json.Marshal(o); err != nil {
			t.Fatalf("ParseOrder(%q) returned an order that does not marshal: %v", body, err)
		}
	})
}

// FuzzCents: Cents never panics and agrees with a float reading where a float is exact enough.
func FuzzCents(f *testing.F) {
	for _, s := range []string{"19.99", "1.005", "1e2", "-0", "5e-3", "999999999999.99"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Cents(s)
		if err != nil {
			return
		}
		if c < 0 || c >= 1e14+1 {
			t.Fatalf("Cents(%q) = %d; out of range", s, c)
		}
	})
}

// A NUL character anywhere in a payload fails validation (no database text column stores
// one), and a NUL id is no usable id for the inbox row.
func TestParseOrderNUL(t *testing.T) {
	valid := `{"id": "A1", "name": "#1", "fulfillmentOrders": [{"destination": {"address1": "1 Main St", "city": "Springfield", "zip": "10001", "province": "NY", "countryCode": "US", "firstName": "Ann"}, "lineItems": [{"quantity": 1}]}]}`
	if _, err := ParseOrder([]byte(valid)); err != nil {
		t.Fatalf("valid payload: %v", err)
	}
	tests := []struct{ body, field string }{
		{strings.Replace(valid, `"A1"`, `"A\u00001"`, 1), "id"},
		{strings.Replace(valid, `"#1"`, `"#\u0000"`, 1), "name"},
		{strings.Replace(valid, `"Springfield"`, `"Spring\u0000field"`, 1), "fulfillmentOrders[0].destination.city"},
		{strings.Replace(valid, `"name"`, `"na\u0000me"`, 1), "(body)"},
	}
	for _, tt := range tests {
		_, err := ParseOrder([]byte(tt.body))
		var v *shipping.ValidationError
		if !errors.As(err, &v) || len(v.Fields) != 1 || v.Fields[0].Field != tt.field {
			t.Errorf("ParseOrder(%s) = %v; want one error on %s", tt.body, err, tt.field)
		}
	}
	if id, err := PeekOrderID([]byte(`{"id": "A\u00001"}`)); err != nil || id != nil {
		t.Errorf("PeekOrderID(NUL id) = %v, %v; want no id", id, err)
	}
}

// FuzzPeekOrderID: the id PeekOrderID reads is the one a decoder reads from the same body
// (the member named exactly "id"), and it refuses exactly what the decoder refuses or finds a
// duplicate key in.
func TestHasLoneSurrogate(t *testing.T) {
	for s, want := range map[string]bool{
		`"a"`:                  false,
		`"\ud800"`:             true,
		`"\udbff\udfff"`:       false,
		`"\ud800\ud800"`:       true,
		`"\ud800\n"`:           true,
		`"\ud800x\udc00"`:      true,
		`"\udc00"`:             true,
		`"\uDC00"`:             true,
		`"\uD83D\uDE00"`:       false,
		`"\\ud800"`:            false, // an escaped backslash, then text
		`"\\\ud800"`:           true,
		`["\u00e9", "\ud800"]`: true,
		`{"\ud800": 1}`:        true,
		`"\uffff\ud7ff\ue000"`: false,
	} {
		if got := HasLoneSurrogate([]byte(s)); got != want {
			t.Errorf("HasLoneSurrogate(%s) = %v; want %v", s, got, want)
		}
	}
}

// tokensRepeatKey reports whether an object in the value dec reads holds a member name twice.
func tokensRepeatKey(dec *json.Decoder) bool {
	tok, _ := dec.Token()
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, _ := dec.Token()
			if seen[k.(string)] || tokensRepeatKey(dec) {
				return true
			}
			seen[k.(string)] = true
		}
	case json.Delim('['):
		for dec.More() {
			if tokensRepeatKey(dec) {
				return true
			}
		}
	default:
		return false
	}
	dec.Token()
	return false
}

func FuzzPeekOrderID(f *testing.F) {
	for _, s := range []string{`{"id":"A-1"}`, `{"id":1e3,"x":[{"id":2}]}`, `{"id":"a","id":"b"}`,
		`{"\u0069d":"x"}`, `[]`, `{"id":"x"}{}`, `{"a":"\\\"","id":7}`, `{"a":[{"b":1,"b":2}]}`, `{"a":{"b":1},"b":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := PeekOrderID(body)
		var doc map[string]json.RawMessage
		dec := json.NewDecoder(bytes.NewReader(body))
		derr := dec.Decode(&doc)
		if derr == nil && (dec.More() || doc == nil) {
			derr = errors.New("not one object")
		}
		if derr == nil {
			if _, err2 := dec.Token(); err2 != io.EOF {
				derr = errors.New("trailing data")
			}
		}
		if derr == nil && tokensRepeatKey(json.NewDecoder(bytes.NewReader(body))) {
			derr = errors.New("duplicate key")
		}
		if derr == nil && HasLoneSurrogate(body) { // TestHasLoneSurrogate holds it
			derr = ErrLoneSurrogate
		}
		if !utf8.Valid(body) {
			derr = errors.New("not UTF-8")
		}
		if (err != nil) != (derr != nil) {
			t.Fatalf("PeekOrderID(%q) error %v, decoder error %v", body, err, derr)
		}
		if err != nil {
			return
		}
		want, ok := idValue(doc["id"])
		if ok != (got != nil) || ok && *got != want {
			t.Fatalf("PeekOrderID(%q) = %v, decoder reads %q (%v)", body, deref(got), want, ok)
		}
	})
}
