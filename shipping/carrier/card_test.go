package carrier

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

var _ = flag.Bool("update", false, "rewrite golden files (used by httpapi)")

// testCard is a small valid card: one service, two breaks.
func testCard() *Card {
	c := &Card{Code: "ACME", Name: "Acme", EffectiveFrom: "2026-01-01", MaxWeightOz: 1120, MaxLengthIn: 108, MaxGirthIn: 165,
		Services: []CardService{{Code: "GROUND", Name: "Ground", TransitDays: []int{1, 2, 3, 4, 5, 6, 7, 8},
			WeightBreaksOz: []int64{16, 32}, PricesCents: [][]int64{{100, 200, 300, 400, 500, 600, 700, 800}, {110, 210, 310, 410, 510, 610, 710, 810}}}},
		FuelSurcharges: []FuelSurcharge{{"2026-01-01", 10}, {"2026-06-01", 12.5}},
		DASCents:       300, EDASCents: 500, DASZips: []string{"10001"}, EDASZips: []string{"10002"},
		Tracking: TrackingScheme{Scheme: SchemeLuhn, Prefix: "AC", Digits: 10, RangeStart: 100, RangeEnd: 102}}
	c.Normalize("ACME", time.Time{})
	return c
}

func fieldsOf(err error) []string {
	var v *shipping.ValidationError
	if !errors.As(err, &v) {
		return nil
	}
	var out []string
	for _, f := range v.Fields {
		out = append(out, f.Field)
	}
	return out
}

func TestCardValidate(t *testing.T) {
	for _, c := range SampleCards() {
		if err := c.Validate(c.Code); err != nil {
			t.Errorf("sample %s: %v", c.Code, err)
		}
	}
	tests := []struct {
		name   string
		code   string
		edit   func(*Card)
		fields []string
	}{
		{"valid", "ACME", func(*Card) {}, nil},
		{"bad code", "acme", func(c *Card) { c.Code = "acme" }, []string{"code"}},
		{"body code differs", "ACME", func(c *Card) { c.Code = "OTHER" }, []string{"code"}},
		{"no name", "ACME", func(c *Card) { c.Name = " " }, []string{"name"}},
		{"bad date", "ACME", func(c *Card) { c.EffectiveFrom = "2026-13-01" }, []string{"effective_from"}},
		{"breaks not increasing", "ACME", func(c *Card) { c.Services[0].WeightBreaksOz = []int64{16, 16} },
			[]string{"services[0].weight_breaks_oz[1]"}},
		{"row per break", "ACME", func(c *Card) { c.Services[0].PricesCents = c.Services[0].PricesCents[:1] },
			[]string{"services[0].prices_cents"}},
		{"7 zones", "ACME", func(c *Card) { c.Services[0].PricesCents[1] = []int64{1, 2, 3, 4, 5, 6, 7} },
			[]string{"services[0].prices_cents[1]"}},
		{"negative price", "ACME", func(c *Card) { c.Services[0].PricesCents[0][3] = -1 },
			[]string{"services[0].prices_cents[0][3]"}},
		{"transit days", "ACME", func(c *Card) { c.Services[0].TransitDays = []int{1} }, []string{"services[0].transit_days"}},
		{"duplicate service", "ACME", func(c *Card) { c.Services = append(c.Services, c.Services[0]) }, []string{"services[1].code"}},
		{"percent over 100", "ACME", func(c *Card) { c.FuelSurcharges[0].Percent = 101 },
			[]string{"fuel_surcharges[0].percent"}},
		{"fuel date", "ACME", func(c *Card) { c.FuelSurcharges[1].EffectiveFrom = "June" }, []string{"fuel_surcharges[1].effective_from"}},
		{"das zip", "ACME", func(c *Card) { c.DASZips = []string{"1234"} }, []string{"das_zips[0]"}},
		{"coverage", "ACME", func(c *Card) { c.Coverage = []string{"935-900"} }, []string{"coverage[0]"}},
		{"zone chart", "ACME", func(c *Card) { c.ZoneChart = []ZoneChartEntry{{"100", "200-299", 9}} }, []string{"zone_chart[0].zone"}},
		{"range start above end", "ACME", func(c *Card) { c.Tracking.RangeStart = 200 }, []string{"tracking.range_end"}},
		{"range beyond digits", "ACME", func(c *Card) { c.Tracking.RangeEnd = 1e10 }, []string{"tracking.range_end"}},
		{"range beyond 18 digits", "ACME", func(c *Card) {
			c.Tracking.Digits, c.Tracking.RangeStart, c.Tracking.RangeEnd = 30, 1<<63-3, 1<<63-1
		}, []string{"tracking.range_end"}},
		{"unknown scheme", "ACME", func(c *Card) { c.Tracking.Scheme = "mod7" }, []string{"tracking.scheme"}},
		{"impb needs codes", "ACME", func(c *Card) {
			c.Tracking = TrackingScheme{Scheme: SchemeUSPSIMpb, MailerID: "927007687", RangeEnd: 10}
		}, []string{"tracking.service_type_codes.GROUND"}},
		{"1z shipper", "ACME", func(c *Card) {
			c.Tracking = TrackingScheme{Scheme: SchemeUPS1Z, ShipperNumber: "99aa1", ServiceCodes: map[string]string{"GROUND": "01", "AIR": "02"}, RangeEnd: 10}
		}, []string{"tracking.shipper_number", "tracking.service_codes.AIR"}},
		{"s10", "ACME", func(c *Card) {
			c.Tracking = TrackingScheme{Scheme: SchemeS10, ServiceIndicators: map[string]string{"GROUND": "LX"}, Country: "US", RangeEnd: 99999999}
		}, nil},
		{"s10 indicator, country, range", "ACME", func(c *Card) {
			c.Tracking = TrackingScheme{Scheme: SchemeS10, ServiceIndicators: map[string]string{"GROUND": "L1", "AIR": "CP"}, Country: "XX", RangeEnd: 1e8}
		}, []string{"tracking.service_indicators.GROUND", "tracking.service_indicators.AIR", "tracking.country", "tracking.range_end"}},
		{"s10 fields on a luhn card", "ACME", func(c *Card) { c.Tracking.Country = "US" }, []string{"tracking.country"}},
		{"too many services", "ACME", func(c *Card) { c.Services = make([]CardService, maxCardServices+1) }, []string{"services"}},
		{"duplicate das zip", "ACME", func(c *Card) { c.DASZips = []string{"10001", "20001", "10001"} }, []string{"das_zips[2]"}},
		{"duplicate edas zip", "ACME", func(c *Card) { c.EDASZips = []string{"10001", "10001"} }, []string{"edas_zips[1]"}},
		{"chart ranges overlap", "ACME", func(c *Card) {
			c.ZoneChart = []ZoneChartEntry{{"100", "200-299", 3}, {"101", "250", 4}, {"100", "300-399", 4}, {"100", "290-310", 5}}
		}, []string{"zone_chart[3].dest_zip3"}},
		{"chart of 100,000 entries", "ACME", func(c *Card) { c.ZoneChart = chartOf(100_000) }, nil},
		{"chart of 100,001 entries", "ACME", func(c *Card) { c.ZoneChart = chartOf(100_001) }, []string{"zone_chart"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := testCard()
			tt.edit(c)
			if got := fieldsOf(c.Validate(tt.code)); !slices.Equal(got, tt.fields) {
				t.Errorf("Validate fields = %q; want %q", got, tt.fields)
			}
		})
	}
}

// chartOf is a zone chart of n entries without overlaps: origins of 1,000 destination ZIP3s.
func chartOf(n int) []ZoneChartEntry {
	out := make([]ZoneChartEntry, n)
	for i := range out {
		out[i] = ZoneChartEntry{fmt.Sprintf("%03d", i/1000%1000), fmt.Sprintf("%03d", i%1000), 1 + i%8}
	}
	return out
}

// A card with only a name and a service gets the default limits and tracking scheme.
func TestCardDefaults(t *testing.T) {
	c := &Card{Name: "Minimal", Services: testCard().Services}
	c.Normalize("R2_D2", time.Date(2026, 11, 22, 23, 0, 0, 0, time.UTC))
	if err := c.Validate("R2_D2"); err != nil {
		t.Fatal(err)
	}
	if c.EffectiveFrom != "2026-11-22" || c.DimFactor != 166 || c.MaxWeightOz != 2400 || c.MaxLengthIn != 108 || c.MaxGirthIn != 165 {
		t.Errorf("defaults: %+v", c)
	}
	if got := c.Tracking.Number("GROUND", 1); got != "RD00000000000000018" {
		t.Errorf("default tracking number = %q; want RD00000000000000018", got)
	}
}

// A card of a megabyte of breaks is refused whole, before its elements are checked.
func TestCardBounded(t *testing.T) {
	c := testCard()
	c.Services[0].WeightBreaksOz = make([]int64, 200_000)
	if got := fieldsOf(c.Validate("ACME")); !slices.Equal(got, []string{"services[0].weight_breaks_oz"}) {
		t.Errorf("Validate fields = %q; want the one too_many", got)
	}
}

func TestPercent(t *testing.T) {
	for _, tt := range []struct {
		f     float64
		want  Percent
		cents int64 // of 1000 cents
	}{{0, 0, 0}, {2, 20000, 20}, {14.5, 145000, 145}, {12.25, 122500, 123}, {0.0001, 1, 0}, {100, 1000000, 1000}} {
		p, ok := PercentOf(tt.f)
		if !ok || p != tt.want {
			t.Errorf("PercentOf(%v) = %d, %v; want %d", tt.f, p, ok, tt.want)
		}
		if got := p.Of(1000); got != tt.cents {
			t.Errorf("%v%% of 1000 = %d; want %d", tt.f, got, tt.cents)
		}
	}
	// Half a cent rounds up: 2.5 % of 905 is 22.625 → 23; 14.5 % of 905 is 131.225 → 131.
	if got := Percent(25000).Of(905); got != 23 {
		t.Errorf("2.5%% of 905 = %d; want 23", got)
	}
	if got := Percent(50000).Of(10); got != 1 { // 0.5 → 1
		t.Errorf("5%% of 10 = %d; want 1 (half up)", got)
	}
	if _, ok := PercentOf(2.00001); ok {
		t.Error("PercentOf(2.00001) ok; want five decimals refused")
	}
}

func TestTrackingSchemes(t *testing.T) {
	tests := []struct {
		name    string
		scheme  TrackingScheme
		service string
		serial  int64
		want    string
		grouped string
	}{
		// The published examples.
		{"ups", TrackingScheme{Scheme: SchemeUPS1Z, ShipperNumber: "999AA1", ServiceCodes: map[string]string{"GROUND": "01"}},
			"GROUND", 2345678, "1Z999AA10123456784", "1Z 999 AA1 01 2345 678 4"},
		{"impb", TrackingScheme{Scheme: SchemeUSPSIMpb, MailerID: "927007687", ServiceTypeCodes: map[string]string{"GROUND": "612"}},
			"GROUND", 1194802, "9261292700768711948021", "9261 2927 0076 8711 9480 21"},
		{"impb 6-digit mailer", TrackingScheme{Scheme: SchemeUSPSIMpb, MailerID: "123456", ServiceTypeCodes: map[string]string{"GROUND": "001"}},
			"GROUND", 7, "9200112345600000000072", "9200 1123 4560 0000 0000 72"},
		{"luhn", TrackingScheme{Scheme: SchemeLuhn, Prefix: "PL", Digits: 16}, "GROUND", 1, "PL00000000000000018", "PL00 0000 0000 0000 018"},
		{"luhn, the textbook example", TrackingScheme{Scheme: SchemeLuhn, Prefix: "ABCD", Digits: 10}, "GROUND", 7992739871, "ABCD79927398713", "ABCD 7992 7398 713"},
		// A UPU S10 number as posts print it.
		{"s10", TrackingScheme{Scheme: SchemeS10, ServiceIndicators: map[string]string{"GROUND": "EE"}, Country: "US"},
			"GROUND", 12345678, "EE123456785US", "EE 123 456 785 US"},
		{"s10, check digit 10 is 0", TrackingScheme{Scheme: SchemeS10, ServiceIndicators: map[string]string{"GROUND": "LX"}, Country: "GB"},
			"GROUND", 8, "LX000000080GB", "LX 000 000 080 GB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.scheme.Number(tt.service, tt.serial)
			if got != tt.want {
				t.Errorf("Number(%q, %d) = %q; want %q", tt.service, tt.serial, got, tt.want)
			}
			if !tt.scheme.ValidTrackingNumber(got) {
				t.Errorf("ValidTrackingNumber(%q) = false", got)
			}
			if g := GroupTrackingCode(got); g != tt.grouped {
				t.Errorf("GroupTrackingCode(%q) = %q; want %q", got, g, tt.grouped)
			}
			for i := len(got) - 8; i < len(got); i++ {
				if tt.scheme.Scheme == SchemeS10 {
					// S10's check digit maps both 0 and 11 − 0 to 5, so a changed digit can keep
					// it: EE123456785US and EE123457785US are both valid. Its own tests cover it.
					break
				}
				bad := []byte(got)
				bad[i] = '0' + (bad[i]-'0'+1)%10
				if tt.scheme.ValidTrackingNumber(string(bad)) {
					t.Errorf("ValidTrackingNumber(%q) = true after changing character %d", bad, i)
				}
			}
			if tt.scheme.ValidTrackingNumber(got + "0") {
				t.Errorf("ValidTrackingNumber(%q) = true", got+"0")
			}
		})
	}
}

func TestInForce(t *testing.T) {
	v := func(n int64, from string) *Version {
		return &Version{Version: n, Card: &Card{EffectiveFrom: from}}
	}
	versions := []*Version{v(1, "2026-01-01"), v(2, "2027-01-01"), v(3, "2026-01-01"), v(4, "2027-01-01")}
	for _, tt := range []struct {
		date string
		want int64
	}{{"2025-12-31", 0}, {"2026-01-01", 3}, {"2026-12-31", 3}, {"2027-01-01", 4}, {"2030-01-01", 4}} {
		got := int64(0)
		if f := InForce(versions, tt.date); f != nil {
			got = f.Version
		}
		if got != tt.want {
			t.Errorf("InForce(%s) = version %d; want %d", tt.date, got, tt.want)
		}
	}
	// The versions in force on a date or after it: the one in force then and those to come,
	// never one that a later-stored version of the same date replaced.
	for _, tt := range []struct {
		date string
		want []int64
	}{{"2025-12-31", []int64{3, 4}}, {"2026-06-01", []int64{3, 4}}, {"2027-01-01", []int64{4}}, {"2030-01-01", []int64{4}}} {
		var got []int64
		for _, v := range InForceFrom(versions, tt.date) {
			got = append(got, v.Version)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("InForceFrom(%s) = versions %v; want %v", tt.date, got, tt.want)
		}
	}
	// Before any is in force, a carrier is shown at the first to come (the last stored of
	// that date); after, at the one in force.
	if v := Shown(versions, "2025-12-31"); v.Version != 3 {
		t.Errorf("Shown(2025-12-31) = version %d; want 3", v.Version)
	}
	if v := Shown(versions, "2027-06-01"); v.Version != 4 {
		t.Errorf("Shown(2027-06-01) = version %d; want 4", v.Version)
	}
}

func TestCardRates(t *testing.T) {
	card := testCard()
	card.Coverage = []string{"100-199", "900"}
	card.ZoneChart = []ZoneChartEntry{{"100", "150-159", 7}}
	c := NewTable("ACME", []*Version{{Version: 4, Card: card}})
	req := func(zip, date string, edit func(*shipping.RateRequest)) shipping.RateRequest {
		r := shipping.RateRequest{Destination: *address(zip, "NY"), LengthIn: 1, WidthIn: 1, HeightIn: 1, WeightOz: 10, Zone: 2,
			ZoneOrigin: shipping.ZIP3Number("100"), ShipDate: date}
		if edit != nil {
			edit(&r)
		}
		return r
	}
	tests := []struct {
		name       string
		req        shipping.RateRequest
		zone       int
		postage    int64
		surcharges []shipping.Surcharge
		err        string
	}{
		{"fuel 10 %", req("10003", "2026-03-01", nil), 2, 200, []shipping.Surcharge{{Type: "FUEL", AmountCents: 20}}, ""},
		{"fuel 12.5 % from June", req("10003", "2026-06-01", nil), 2, 200, []shipping.Surcharge{{Type: "FUEL", AmountCents: 25}}, ""},
		{"card DAS list", req("10001", "2026-03-01", nil), 2, 200, []shipping.Surcharge{{Type: "FUEL", AmountCents: 20}, {Type: "DAS", AmountCents: 300}}, ""},
		{"card EDAS list", req("10002", "2026-03-01", nil), 2, 200, []shipping.Surcharge{{Type: "FUEL", AmountCents: 20}, {Type: "EDAS", AmountCents: 500}}, ""},
		{"profile list replaces the card's", req("10001", "2026-03-01", func(r *shipping.RateRequest) { r.AreaSurchargeFromProfile = true }),
			2, 200, []shipping.Surcharge{{Type: "FUEL", AmountCents: 20}}, ""},
		{"profile EDAS", req("10003", "2026-03-01", func(r *shipping.RateRequest) { r.AreaSurcharge, r.AreaSurchargeFromProfile = "EDAS", true }),
			2, 200, []shipping.Surcharge{{Type: "FUEL", AmountCents: 20}, {Type: "EDAS", AmountCents: 500}}, ""},
		{"carrier chart over distance", req("15001", "2026-03-01", nil), 7, 700, []shipping.Surcharge{{Type: "FUEL", AmountCents: 70}}, ""},
		{"profile route over chart", req("15001", "2026-03-01", func(r *shipping.RateRequest) { r.ZoneFromProfile = true }),
			2, 200, []shipping.Surcharge{{Type: "FUEL", AmountCents: 20}}, ""},
		// 432 in³ / 166 = 41.6 oz billable, above the last break.
		{"dim weight at 166", req("10003", "2026-03-01", func(r *shipping.RateRequest) { r.LengthIn, r.WidthIn, r.HeightIn = 12, 12, 3 }),
			0, 0, nil, "no service carries 42 oz (billable)"},
		{"outside coverage", req("20001", "2026-03-01", nil), 0, 0, nil, "zip not serviced"},
		{"before the card", req("10003", "2025-12-31", nil), 0, 0, nil, "no rate card in force on 2025-12-31"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, ok := oneQuote(t, c, tt.req, tt.err)
			if ok && (q.Zone != tt.zone || q.PostageCents != tt.postage || !slices.Equal(q.Surcharges, tt.surcharges) || q.CarrierVersion != 4 || q.DimFactor != 166) {
				t.Errorf("quote = zone %d, %d, %v, version %d, dim %d; want zone %d, %d, %v, version 4, dim 166",
					q.Zone, q.PostageCents, q.Surcharges, q.CarrierVersion, q.DimFactor, tt.zone, tt.postage, tt.surcharges)
			}
		})
	}
	if _, err := c.Rates(context.Background(), req("20001", "2026-03-01", nil)); !errors.Is(err, shipping.ErrZipNotServiced) {
		t.Errorf("Rates outside coverage = %v; want ErrZipNotServiced", err)
	}
	// A card's own dim factor prices the dimensional weight. Versions never change: the
	// changed card is another version, compiled anew.
	card.DimFactor = 400
	c = NewTable("ACME", []*Version{{Version: 4, Card: card}})
	quotes, err := c.Rates(context.Background(), req("10003", "2026-03-01", func(r *shipping.RateRequest) { r.LengthIn, r.WidthIn, r.HeightIn = 12, 12, 3 }))
	if err != nil || quotes[0].BillableWeightOz != 18 || quotes[0].PostageCents != 210 {
		t.Errorf("with dim factor 400: %v, %v; want 18 oz (432/400 lb) at 210", quotes, err)
	}
}

func TestPurchaseExhausted(t *testing.T) {
	c := NewTable("ACME", []*Version{{Version: 1, Card: testCard()}})
	serials := serialCounter{}
	var codes []string
	for range 3 {
		code, err := c.Purchase(context.Background(), shipping.PurchaseRequest{Service: "GROUND", ShipDate: "2026-03-01", Serials: serials})
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, code)
	}
	if want := []string{"AC00000001008", "AC00000001016", "AC00000001024"}; !slices.Equal(codes, want) {
		t.Errorf("codes = %q; want %q (serials 100 to 102)", codes, want)
	}
	if _, err := c.Purchase(context.Background(), shipping.PurchaseRequest{Service: "GROUND", ShipDate: "2026-03-01", Serials: serials}); !errors.Is(err, shipping.ErrTrackingNumbersExhausted) {
		t.Errorf("Purchase past range_end = %v; want ErrTrackingNumbersExhausted", err)
	}
}

func TestParsePriceGrid(t *testing.T) {
	breaks, prices, err := ParsePriceGrid(strings.NewReader("weight_lb,zone_1,zone_2,zone_3,zone_4,zone_5,zone_6,zone_7,zone_8\n" +
		"0.25,1,1.5,1.05,2,2,2,2,2\n1,10.99,11,11,11,11,11,11,0\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(breaks, []int64{4, 16}) || !slices.Equal(prices[0], []int64{100, 150, 105, 200, 200, 200, 200, 200}) ||
		!slices.Equal(prices[1], []int64{1099, 1100, 1100, 1100, 1100, 1100, 1100, 0}) {
		t.Errorf("ParsePriceGrid = %v, %v", breaks, prices)
	}
	const header = "weight_oz,zone_1,zone_2,zone_3,zone_4,zone_5,zone_6,zone_7,zone_8\n"
	for _, tt := range []struct {
		csv    string
		fields []string
	}{
		{"", []string{"header"}},
		{"weight,zone_1\n", []string{"header"}},
		{header, []string{"row 1"}},
		{header + "4,1,2,3,4,5,6,7,8\n8,1,2,3,4,5,6,7\n", []string{"row 2"}},
		{header + "4,1,2,3,4,5,6,7,8\n8,1,x,3,4,5,6,7,8\n", []string{"row 2, zone_2"}},
		{header + "4,1,2,3,4,5,6,7,8\n4,1,2,3,4,5,6,7,-8\n", []string{"row 2, weight_oz", "row 2, zone_8"}},
		{header + "4.5,1.001,2,3,4,5,6,7,8\n", []string{"row 1, weight_oz", "row 1, zone_1"}},
		{"weight_lb,zone_1,zone_2,zone_3,zone_4,zone_5,zone_6,zone_7,zone_8\n0.01,1,2,3,4,5,6,7,8\n", []string{"row 1, weight_lb"}},
	} {
		if _, _, err := ParsePriceGrid(strings.NewReader(tt.csv)); !slices.Equal(fieldsOf(err), tt.fields) {
			t.Errorf("ParsePriceGrid(%q) fields = %q (%v); want %q", tt.csv, fieldsOf(err), err, tt.fields)
		}
	}
}

// TestParsePriceGridSpreadsheet: a grid as spreadsheets save it — a UTF-8 byte-order mark,
// CRLF line ends, no newline after the last row — reads as the plain one does.
func TestParsePriceGridSpreadsheet(t *testing.T) {
	rows := []string{"weight_oz,zone_1,zone_2,zone_3,zone_4,zone_5,zone_6,zone_7,zone_8",
		"16,7.45,7.95,8.45,8.95,9.45,9.95,10.45,10.95", "32,8.00,8.50,9.00,9.50,10.00,10.50,11.00,11.50"}
	wantBreaks := []int64{16, 32}
	wantPrices := [][]int64{{745, 795, 845, 895, 945, 995, 1045, 1095}, {800, 850, 900, 950, 1000, 1050, 1100, 1150}}
	for _, tt := range []struct {
		name, csv string
	}{
		{"LF", strings.Join(rows, "\n") + "\n"},
		{"CRLF", strings.Join(rows, "\r\n") + "\r\n"},
		{"CRLF without a last line end", strings.Join(rows, "\r\n")},
		{"BOM and LF", "\ufeff" + strings.Join(rows, "\n") + "\n"},
		{"BOM and CRLF", "\ufeff" + strings.Join(rows, "\r\n") + "\r\n"},
		{"BOM, CRLF, pounds", "\ufeffweight_lb,zone_1,zone_2,zone_3,zone_4,zone_5,zone_6,zone_7,zone_8\r\n" +
			"1,7.45,7.95,8.45,8.95,9.45,9.95,10.45,10.95\r\n2,8.00,8.50,9.00,9.50,10.00,10.50,11.00,11.50\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			breaks, prices, err := ParsePriceGrid(strings.NewReader(tt.csv))
			if err != nil || !slices.Equal(breaks, wantBreaks) || !slices.EqualFunc(prices, wantPrices, slices.Equal) {
				t.Errorf("ParsePriceGrid(%q) = %v, %v, %v; want %v, %v", tt.csv, breaks, prices, err, wantBreaks, wantPrices)
			}
		})
	}
	// Only a mark at the very start is one: elsewhere it is a character of a cell.
	bad := strings.Join(rows, "\n") + "\n\ufeff48,1,1,1,1,1,1,1,1\n"
	if _, _, err := ParsePriceGrid(strings.NewReader(bad)); !slices.Equal(fieldsOf(err), []string{"row 3, weight_oz"}) {
		t.Errorf("ParsePriceGrid(%q) fields = %q; want [row 3, weight_oz]", bad, fieldsOf(err))
	}
}

func TestPriceChanges(t *testing.T) {
	prev := testCard()
	next := prev.WithGrid("GROUND", []int64{16, 48}, [][]int64{{100, 200, 300, 400, 500, 600, 700, 899}, {1, 2, 3, 4, 5, 6, 7, 8}}, "2027-01-01")
	changes := PriceChanges(prev, next)
	var got []string
	for _, c := range changes {
		got = append(got, c.Service+" "+strings.Join([]string{itoa(c.WeightBreakOz), itoa(int64(c.Zone)), c.Change}, " "))
	}
	if len(got) != 17 || got[0] != "GROUND 16 8 changed" || got[1] != "GROUND 32 1 removed" || got[9] != "GROUND 48 1 added" {
		t.Errorf("PriceChanges = %q", got)
	}
	if *changes[0].OldCents != 800 || *changes[0].NewCents != 899 || changes[1].NewCents != nil || changes[9].OldCents != nil {
		t.Errorf("PriceChanges amounts = %+v", changes[:2])
	}
	if n := len(PriceChanges(nil, prev)); n != 16 {
		t.Errorf("PriceChanges(nil, card) = %d changes; want 16 added", n)
	}
	if n := len(PriceChanges(prev, prev)); n != 0 {
		t.Errorf("PriceChanges(card, card) = %d changes; want none", n)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// oneQuote asks c to quote req. With wantErr it wants that error and reports false; otherwise it
// wants exactly one quote, and returns it.
func oneQuote(t *testing.T, c shipping.Carrier, req shipping.RateRequest, wantErr string) (shipping.Quote, bool) {
	t.Helper()
	quotes, err := c.Rates(context.Background(), req)
	if wantErr != "" {
		if err == nil || err.Error() != wantErr {
			t.Fatalf("Rates = %v, %v; want error %q", quotes, err, wantErr)
		}
		return shipping.Quote{}, false
	}
	if err != nil || len(quotes) != 1 {
		t.Fatalf("Rates = %v, %v; want one quote", quotes, err)
	}
	return quotes[0], true
}

func address(zip, state string) *shipping.Address {
	return &shipping.Address{Name: "N", Street1: "1 Main St", City: "City", State: state, Zip: zip, Country: "US"}
}
