package rating

import "time"

// Holidays the federal calendar fixes to a date (5 U.S.C. 6103). Juneteenth is one from 2021.
var fixedHolidays = []struct {
	month time.Month
	day   int
	name  string
	since int
}{
	{time.January, 1, "New Year's Day", 0},
	{time.June, 19, "Juneteenth National Independence Day", 2021},
	{time.July, 4, "Independence Day", 0},
	{time.November, 11, "Veterans Day", 0},
	{time.December, 25, "Christmas Day", 0},
}

// FederalHoliday reports whether day (its date; the time of day is ignored) is a US federal
// holiday as observed: the eleven holidays of 5 U.S.C. 6103 (Inauguration Day, a holiday only
// around Washington, D.C., is not counted). A fixed-date holiday on a Saturday is observed the
// Friday before, one on a Sunday the Monday after — so New Year's Day 2022, a Saturday, is
// observed on Friday 2021-12-31. It returns the holiday's name.
func FederalHoliday(day time.Time) (string, bool) {
	y, m, d := day.Date()
	wd := day.Weekday()
	if wd == time.Saturday || wd == time.Sunday {
		return "", false
	}
	// A weekday observes its own fixed-date holiday, a Friday also Saturday's, a Monday also
	// Sunday's.
	date := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	if name, ok := fixedHoliday(date); ok {
		return name, true
	}
	if wd == time.Friday {
		if name, ok := fixedHoliday(date.AddDate(0, 0, 1)); ok {
			return name, true
		}
	}
	if wd == time.Monday {
		if name, ok := fixedHoliday(date.AddDate(0, 0, -1)); ok {
			return name, true
		}
	}
	// The others fall on a weekday by definition: the nth (or last) Monday or Thursday.
	nth := (d-1)/7 + 1
	switch {
	case wd == time.Monday && m == time.January && nth == 3:
		return "Birthday of Martin Luther King, Jr.", true
	case wd == time.Monday && m == time.February && nth == 3:
		return "Washington's Birthday", true
	case wd == time.Monday && m == time.May && d+7 > 31: // the last Monday of May
		return "Memorial Day", true
	case wd == time.Monday && m == time.September && nth == 1:
		return "Labor Day", true
	case wd == time.Monday && m == time.October && nth == 2:
		return "Columbus Day", true
	case wd == time.Thursday && m == time.November && nth == 4:
		return "Thanksgiving Day", true
	}
	return "", false
}

// fixedHoliday reports whether date is one of fixedHolidays, whatever its weekday.
func fixedHoliday(date time.Time) (string, bool) {
	y, m, d := date.Date()
	for _, h := range fixedHolidays {
		if m == h.month && d == h.day && y >= h.since {
			return h.name, true
		}
	}
	return "", false
}

// BusinessDay reports whether day is a day carriers deliver on: Monday to Friday, and not a
// federal holiday (as observed).
func BusinessDay(day time.Time) bool {
	if wd := day.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	_, holiday := FederalHoliday(day)
	return !holiday
}
