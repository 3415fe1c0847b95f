package carrier

import (
	"bufio"
	"encoding/csv"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/waybill/waybill/shipping"
)

// ParsePriceGrid reads one service's price grid from CSV: a header row
// "weight_oz,zone_1,…,zone_8" (or weight_lb; an international service's has zone_1 to zone_N,
// N up to 20), then one row per weight break with a price per zone in dollars and
// cents ("7.45"), parsed exactly into cents. Errors name the row (data rows
// counted from 1 after the header) and the column by its header name. A UTF-8 byte-order mark
// and CRLF line ends, as spreadsheets save CSV, are accepted.
func ParsePriceGrid(r io.Reader) (breaksOz []int64, pricesCents [][]int64, err error) {
	cr := csv.NewReader(skipBOM(r))
	cr.FieldsPerRecord = -1 // counted here, to name the row
	cr.ReuseRecord = true
	var v shipping.ValidationError
	header, err := cr.Read()
	if err != nil {
		v.Add("header", "required", "must be weight_oz (or weight_lb),zone_1,…,zone_8")
		return nil, nil, v.Err()
	}
	perLb := header[0] == "weight_lb"
	// A domestic service's grid has 8 zones; an international one's as many as its card's
	// highest country zone (Card.CheckGrid compares them).
	zones := len(header) - 1
	if zones < 1 || zones > MaxCountryZone || !slices.Equal(header[1:], gridHeader(zones)[1:]) {
		zones = 8
	}
	want := gridHeader(zones)
	if perLb {
		want[0] = "weight_lb"
	}
	if !slices.Equal(header, want) {
		v.Add("header", "invalid", "must be "+strings.Join(want, ","))
		return nil, nil, v.Err()
	}
	for row := 1; ; row++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		at := "row " + strconv.Itoa(row)
		if err != nil {
			v.Add(at, "invalid", "is not CSV: "+err.Error())
			break
		}
		if row > maxCardBreaks {
			v.Add(at, "too_many", "a grid has at most "+strconv.Itoa(maxCardBreaks)+" weight breaks")
			break
		}
		if len(rec) != len(want) {
			v.Add(at, "invalid", "must have "+strconv.Itoa(len(want))+" columns")
			continue
		}
		oz, ok := parseBreak(rec[0], perLb)
		switch {
		case !ok:
			v.Add(at+", "+want[0], "invalid", "must be a positive whole number of ounces")
		case len(breaksOz) > 0 && oz <= breaksOz[len(breaksOz)-1]:
			v.Add(at+", "+want[0], "not_increasing", "must be above the row before")
		}
		prices := make([]int64, zones)
		for z := range zones {
			cents, ok := parseDecimal(strings.TrimSpace(rec[1+z]), 2)
			if !ok || cents < 0 {
				v.Add(at+", "+want[1+z], "invalid", "must be a price in dollars, such as 7.45")
			}
			prices[z] = cents
		}
		breaksOz, pricesCents = append(breaksOz, oz), append(pricesCents, prices)
		if len(v.Fields) > 100 {
			break // a short list says enough
		}
	}
	if len(breaksOz) == 0 && v.Err() == nil {
		v.Add("row 1", "required", "the grid needs at least one weight break")
	}
	if err := v.Err(); err != nil {
		return nil, nil, err
	}
	return breaksOz, pricesCents, nil
}

// gridHeader is a price grid's CSV header for zones zones.
func gridHeader(zones int) []string {
	h := []string{"weight_oz"}
	for z := 1; z <= zones; z++ {
		h = append(h, "zone_"+strconv.Itoa(z))
	}
	return h
}

// CheckGrid refuses a grid for service whose rows have another number of zones than the
// service prices (8 at home, the card's highest country zone abroad), naming the CSV's header.
func (c *Card) CheckGrid(service string, prices [][]int64) error {
	s := c.Service(service)
	if s == nil || len(prices) == 0 {
		return nil
	}
	if zones := c.zones(s); zones > 0 && len(prices[0]) != zones {
		var v shipping.ValidationError
		v.Add("header", "invalid", "must be "+strings.Join(gridHeader(zones), ",")+" (or weight_lb): service "+service+" prices "+strconv.Itoa(zones)+" zones")
		return v.Err()
	}
	return nil
}

// utf8BOM is the byte-order mark Excel's "CSV UTF-8" writes at the start of a file.
const utf8BOM = "\ufeff"

// skipBOM is r without a UTF-8 byte-order mark at its start.
func skipBOM(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(len(utf8BOM)); err == nil && string(b) == utf8BOM {
		br.Discard(len(utf8BOM))
	}
	return br
}

// parseBreak reads a weight break: whole ounces, or pounds that make whole ounces.
func parseBreak(s string, perLb bool) (int64, bool) {
	s = strings.TrimSpace(s)
	if !perLb {
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil && n > 0 && n < 1e9 && digitCount(s) == len(s)
	}
	n, ok := parseDecimal(s, 4) // ten-thousandths of a pound
	if !ok || n <= 0 || n*16%10000 != 0 {
		return 0, false
	}
	return n * 16 / 10000, true
}

// PriceChange is one price of a card added, removed or changed against another version.
type PriceChange struct {
	Service       string `json:"service"`
	WeightBreakOz int64  `json:"weight_break_oz"`
	Zone          int    `json:"zone"`
	Change        string `json:"change"` // added, removed or changed
	OldCents      *int64 `json:"old_cents"`
	NewCents      *int64 `json:"new_cents"`
}

// PriceChanges lists every price of next that is not in prev with the same amount, and every
// price of prev that next no longer has: by service (next's order, then removed services),
// weight break and zone. prev may be nil (a new carrier).
func PriceChanges(prev, next *Card) []PriceChange {
	changes := []PriceChange{}
	var services []string
	for _, c := range []*Card{next, prev} {
		if c == nil {
			continue
		}
		for _, s := range c.Services {
			if !slices.Contains(services, s.Code) {
				services = append(services, s.Code)
			}
		}
	}
	grid := func(c *Card, service string) map[int64][]int64 {
		m := map[int64][]int64{}
		if c == nil {
			return m
		}
		if s := c.Service(service); s != nil {
			for i, b := range s.WeightBreaksOz {
				m[b] = s.PricesCents[i]
			}
		}
		return m
	}
	for _, code := range services {
		old, cur := grid(prev, code), grid(next, code)
		var breaks []int64
		for _, m := range []map[int64][]int64{old, cur} {
			for b := range m {
				if !slices.Contains(breaks, b) {
					breaks = append(breaks, b)
				}
			}
		}
		slices.Sort(breaks)
		for _, b := range breaks {
			// An international service's rows are as long as its zones.
			for z := range max(len(old[b]), len(cur[b])) {
				o, n := cell(old[b], z), cell(cur[b], z)
				c := PriceChange{Service: code, WeightBreakOz: b, Zone: z + 1, OldCents: o, NewCents: n}
				switch {
				case o == nil && n != nil:
					c.Change = "added"
				case o != nil && n == nil:
					c.Change = "removed"
				case o != nil && n != nil && *o != *n:
					c.Change = "changed"
				default:
					continue
				}
				changes = append(changes, c)
			}
		}
	}
	return changes
}

func cell(row []int64, zone int) *int64 {
	if zone >= len(row) {
		return nil
	}
	return &row[zone]
}
