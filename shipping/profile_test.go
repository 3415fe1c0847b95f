package shipping

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
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
			var ve *ValidationError
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
