package rating

import (
	"testing"
	"time"
)

func TestFederalHoliday(t *testing.T) {
	tests := []struct {
		date string
		want string // "" for no holiday
	}{
		// 2021: Juneteenth's first year, observed Friday the 18th; Christmas (Saturday) observed
		// Friday the 24th; New Year's Day 2022 (Saturday) observed Friday 2021-12-31.
		{"2021-01-01", "New Year's Day"},
		{"2021-01-18", "Birthday of Martin Luther King, Jr."},
		{"2021-02-15", "Washington's Birthday"},
		{"2021-05-31", "Memorial Day"},
		{"2021-06-18", "Juneteenth National Independence Day"},
		{"2021-06-19", ""}, // Saturday: observed the day before
		{"2021-07-05", "Independence Day"},
		{"2021-09-06", "Labor Day"},
		{"2021-10-11", "Columbus Day"},
		{"2021-11-11", "Veterans Day"},
		{"2021-11-25", "Thanksgiving Day"},
		{"2021-12-24", "Christmas Day"},
		{"2021-12-31", "New Year's Day"},
		// 2022: New Year's Day is not observed again in 2022; Juneteenth (Sunday) observed Monday.
		{"2022-01-03", ""},
		{"2022-01-17", "Birthday of Martin Luther King, Jr."},
		{"2022-06-20", "Juneteenth National Independence Day"},
		{"2022-07-04", "Independence Day"},
		{"2022-11-11", "Veterans Day"},
		{"2022-11-24", "Thanksgiving Day"},
		{"2022-12-26", "Christmas Day"},
		// 2023: New Year's Day (Sunday) observed Monday 2nd; Veterans Day (Saturday) Friday 10th.
		{"2023-01-02", "New Year's Day"},
		{"2023-11-10", "Veterans Day"},
		{"2023-11-13", ""},
		// 2026: Independence Day (Saturday) observed Friday 3rd; Memorial Day the 25th, not the 18th.
		{"2026-05-18", ""},
		{"2026-05-25", "Memorial Day"},
		{"2026-07-03", "Independence Day"},
		{"2026-07-06", ""},
		{"2026-09-07", "Labor Day"},
		{"2026-10-12", "Columbus Day"},
		{"2026-11-11", "Veterans Day"},
		{"2026-11-19", ""}, // the third Thursday
		{"2026-11-26", "Thanksgiving Day"},
		{"2026-11-27", ""}, // the day after Thanksgiving is a business day
		{"2026-12-25", "Christmas Day"},
		// 2027: Juneteenth (Saturday) observed Friday 18th; Christmas (Saturday) Friday 24th; New
		// Year's Day 2028 (Saturday) Friday 2027-12-31.
		{"2027-06-18", "Juneteenth National Independence Day"},
		{"2027-12-24", "Christmas Day"},
		{"2027-12-31", "New Year's Day"},
		{"2028-05-29", "Memorial Day"}, // May with five Mondays
		// Before 2021 there is no Juneteenth; weekends are never holidays themselves.
		{"2020-06-19", ""},
		{"2026-07-04", ""},
		{"2028-01-01", ""},
		{"2026-11-24", ""},
	}
	for _, tt := range tests {
		day, err := time.Parse(time.DateOnly, tt.date)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := FederalHoliday(day)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("FederalHoliday(%s) = %q, %v; want %q", tt.date, got, ok, tt.want)
		}
	}
}

// TestFederalHolidayCount: every year from 2021 to 2040 observes exactly eleven holidays on
// weekdays (New Year's Day may be observed in the year before, on December 31st).
func TestFederalHolidayCount(t *testing.T) {
	for year := 2021; year <= 2040; year++ {
		n := 0
		for d := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() == year; d = d.AddDate(0, 0, 1) {
			name, ok := FederalHoliday(d)
			if !ok {
				continue
			}
			if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
				t.Errorf("FederalHoliday(%s) = %q on a %s", d.Format(time.DateOnly), name, wd)
			}
			if !(name == "New Year's Day" && d.Month() == time.December) {
				n++
			}
		}
		if jan1 := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC); jan1.Weekday() == time.Saturday {
			n++ // observed on December 31st of the year before
		}
		if n != 11 {
			t.Errorf("%d observes %d federal holidays; want 11", year, n)
		}
	}
}

func BenchmarkBusinessDay(b *testing.B) {
	day := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for i := 0; i < b.N; i++ {
		BusinessDay(day.AddDate(0, 0, i%400))
	}
}
