package rating

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

// TestNewProfileBounds: an oversized collection is refused whole with one too_many error,
// before its elements are checked, so a hostile body costs linear time and a short answer.
func TestNewProfileBounds(t *testing.T) {
	known := []string{"POSTLINE", "PARCELCO"}
	many := func(n int, f func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	keys := func(n int) map[string][]string {
		m := map[string][]string{}
		for i := range n {
			m[fmt.Sprint("C", i)] = []string{"900"}
		}
		return m
	}
	tests := []struct {
		name   string
		in     ProfileInput
		fields []string // every field error's field: code
	}{
		{"carriers at the bound, duplicates reported", ProfileInput{Name: "x", Carriers: many(maxProfileCarriers, func(int) string { return "POSTLINE" })}, nil},
		{"too many carriers", ProfileInput{Name: "x", Carriers: many(45_000, func(int) string { return "POSTLINE" }), ZipCoverage: keys(45_000)},
			[]string{"carriers: too_many", "zip_coverage: too_many"}},
		{"too many ranges", ProfileInput{Name: "x", Carriers: []string{"POSTLINE"},
			ZipCoverage: map[string][]string{"POSTLINE": many(maxProfileZip3Ranges+1, func(int) string { return "000-999" })}},
			[]string{"zip_coverage.POSTLINE: too_many"}},
		{"too many sort centers", ProfileInput{Name: "x", Carriers: []string{"POSTLINE"}, SortCenters: make([]SortCenter, maxProfileSortCenters+1)},
			[]string{"sort_centers: too_many"}},
		{"too many routes", ProfileInput{Name: "x", Carriers: []string{"POSTLINE"}, ZoneTNTMapping: make([]ZoneTNT, maxProfileZoneMappings+1)},
			[]string{"zone_tnt_mapping: too_many"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := NewProfile("x", tt.in, known, time.Now())
			if d := time.Since(start); d > time.Second {
				t.Errorf("NewProfile took %v; want well under a second", d)
			}
			var ve *shipping.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("NewProfile = %v; want a *ValidationError", err)
			}
			if tt.fields == nil {
				for _, f := range ve.Fields {
					if f.Code == "too_many" {
						t.Errorf("NewProfile at the bound: %s too_many", f.Field)
					}
				}
				return
			}
			var got []string
			for _, f := range ve.Fields {
				got = append(got, f.Field+": "+f.Code)
			}
			if strings.Join(got, ", ") != strings.Join(tt.fields, ", ") {
				t.Errorf("NewProfile errors = %q; want %q", got, tt.fields)
			}
		})
	}
}

func TestNewProfile(t *testing.T) {
	known := []string{"POSTLINE", "PARCELCO", "SPEEDSHIP", "REGIONALX"}
	good := DefaultProfile()
	if _, err := NewProfile("default", good, known, time.Time{}); err != nil {
		t.Fatalf("NewProfile(default) = %v", err)
	}
	tests := []struct {
		name   string
		key    string
		edit   func(*ProfileInput)
		fields []string
	}{
		{"bad key", "Bad Key", func(*ProfileInput) {}, []string{"profile_key"}},
		{"no name", "k", func(p *ProfileInput) { p.Name = " " }, []string{"name"}},
		{"no carriers", "k", func(p *ProfileInput) { p.Carriers = nil; p.ZipCoverage = nil; p.ZipSurcharges = nil }, []string{"carriers"}},
		{"unknown carrier", "k", func(p *ProfileInput) { p.Carriers = append(p.Carriers, "ACME") }, []string{"carriers.4"}},
		{"duplicate carrier", "k", func(p *ProfileInput) { p.Carriers = append(p.Carriers, "POSTLINE") }, []string{"carriers.4"}},
		{"bad sort center", "k", func(p *ProfileInput) { p.SortCenters = []SortCenter{{ID: "", Name: "x", Zip: "00000"}} },
			[]string{"sort_centers.0.id", "sort_centers.0.zip"}},
		{"bad coverage", "k", func(p *ProfileInput) {
			p.ZipCoverage = map[string][]string{"POSTLINE": {"900-800", "9000", "abc"}, "ACME": {"900"}}
		}, []string{"zip_coverage.ACME", "zip_coverage.POSTLINE.0", "zip_coverage.POSTLINE.1", "zip_coverage.POSTLINE.2"}},
		{"bad surcharge", "k", func(p *ProfileInput) {
			p.ZipSurcharges = map[string]map[string]string{"PARCELCO": {"10001": "XAS", "1000": "DAS"}}
		}, []string{"zip_surcharges.PARCELCO.1000", "zip_surcharges.PARCELCO.10001"}},
		{"bad mapping", "k", func(p *ProfileInput) {
			p.ZoneTNTMapping = []ZoneTNT{{OriginZip3: "000", DestZip3: "100", Zone: 9, TransitDays: 0},
				{OriginZip3: "100", DestZip3: "100", Zone: 1, TransitDays: 1}, {OriginZip3: "100", DestZip3: "100", Zone: 1, TransitDays: 1}}
		}, []string{"zone_tnt_mapping.0.origin_zip3", "zone_tnt_mapping.0.zone", "zone_tnt_mapping.0.transit_days", "zone_tnt_mapping.2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := DefaultProfile()
			tt.edit(&in)
			_, err := NewProfile(tt.key, in, known, time.Time{})
			var ve *shipping.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("NewProfile = %v; want a ValidationError", err)
			}
			var got []string
			for _, f := range ve.Fields {
				got = append(got, f.Field)
			}
			if !slices.Equal(got, tt.fields) {
				t.Errorf("NewProfile fields = %v; want %v", got, tt.fields)
			}
		})
	}
}
