package store

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/waybill/waybill/shipping"
)

// TestQuoteColumnsCoverRates: a shipment's quotes are kept only as rows of shipment_quotes, so a
// field added to a quote (shipping.Rate and what it holds) fails here until the rows hold it
// (quoteColumns, quoteRowsOf, scanQuote, TestQuoteRoundTrip); else the record, and every
// rendering made from it, would drop it without a word.
func TestQuoteColumnsCoverRates(t *testing.T) {
	stored := []struct {
		typ    reflect.Type
		fields []string
	}{
		{reflect.TypeFor[shipping.Rate](), []string{"ID", "ShipmentID", "Carrier", "Service", "Price", "EstimatedDeliveryDate",
			"EstimatedDeliveryDays", "RateMetadata", "PostageCents", "SurchargesCents", "TotalCents", "RetailCents"}},
		{reflect.TypeFor[shipping.RateMetadata](), []string{"USPSZone", "CountryZone", "BillableWeight", "WeightMetadata",
			"SurchargesMetadata", "CarrierVersion", "DDPFee"}},
		{reflect.TypeFor[shipping.WeightMetadata](), []string{"ActualOzWeight", "BillableOzWeight", "DimFactor", "DimThreshold", "Volume"}},
		{reflect.TypeFor[shipping.SurchargeMetadata](), []string{"SurchargeType", "Surcharge"}},
		{reflect.TypeFor[shipping.Money](), []string{"Amount", "Currency"}},
	}
	for _, s := range stored {
		var got []string
		for f := range s.typ.Fields() {
			got = append(got, f.Name)
		}
		if !reflect.DeepEqual(got, s.fields) {
			t.Errorf("fields of %s = %v; shipment_quotes holds %v", s.typ, got, s.fields)
		}
	}
}

// TestQuoteRoundTrip: a quote with every field set reads back from its row as it was stored.
func TestQuoteRoundTrip(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct, err := db.CreateAccount(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	s := boughtShipment()
	s.AccountID, s.Status, s.ShippingLabel, s.Carrier = acct.ID, shipping.StatusOpen, nil, ""
	ddp := shipping.USD(1250)
	s.ShippingRates[0].RateMetadata = shipping.RateMetadata{CountryZone: 17, BillableWeight: 33,
		WeightMetadata:     shipping.WeightMetadata{ActualOzWeight: 20.25, BillableOzWeight: 33, DimFactor: 166, DimThreshold: 1728, Volume: 320.5},
		SurchargesMetadata: []shipping.SurchargeMetadata{{SurchargeType: "FUEL", Surcharge: shipping.USD(40)}, {SurchargeType: "DDP", Surcharge: ddp}},
		CarrierVersion:     4, DDPFee: &ddp}
	if _, err := db.CreateShipment(ctx, s); err != nil {
		t.Fatal(err)
	}
	got, err := db.Shipment(ctx, acct.ID, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.ShippingRates, s.ShippingRates) {
		t.Errorf("quotes read back\n %+v\nwant\n %+v", got.ShippingRates, s.ShippingRates)
	}
}

// quoteInsert's statement has n rows of placeholders, $1 to $n×quoteArgs, whether made or
// taken from its cache (the store suite checks their order in every query it sends).
func TestQuoteInsert(t *testing.T) {
	for _, n := range []int{1, 2, 9, 1, 9} {
		s := quoteInsert(n)
		last := "$" + strconv.Itoa(n*quoteArgs) + ")"
		if got := strings.Count(s, "$"); got != n*quoteArgs || !strings.HasSuffix(s, last) || strings.Count(s, "), (") != n-1 {
			t.Errorf("quoteInsert(%d) = %q; want %d rows, %d placeholders, the last %s", n, s, n, n*quoteArgs, last)
		}
	}
}

// oneStatement joins a write's statements into one for PostgreSQL: the ones before the last as
// data-modifying WITHs, each one's placeholders numbered on after the highest before it,
// whether made or taken from its cache.
func TestOneStatement(t *testing.T) {
	for range 2 {
		for _, c := range []struct {
			queries []string
			want    string
		}{
			{[]string{"INSERT INTO a VALUES ($1, $2)"}, "INSERT INTO a VALUES ($1, $2)"},
			{[]string{"INSERT INTO a VALUES ($1, $2)", "INSERT INTO b VALUES ($1, $2, $1)", "INSERT INTO c VALUES ($1, $10)"},
				"WITH w0 AS (INSERT INTO a VALUES ($1, $2)), w1 AS (INSERT INTO b VALUES ($3, $4, $3)) INSERT INTO c VALUES ($5, $14)"},
		} {
			if got := oneStatement(c.queries); got != c.want {
				t.Errorf("oneStatement(%q) =\n %s\nwant\n %s", c.queries, got, c.want)
			}
		}
	}
}
