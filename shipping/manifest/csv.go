package manifest

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
)

// CSVHeader is the header row of a manifest's carrier CSV; the columns are fixed.
var CSVHeader = []string{"tracking_code", "service", "ship_date", "weight_oz", "length_in", "width_in", "height_in",
	"from_zip", "to_name", "to_street1", "to_city", "to_state", "to_zip", "to_country", "reference"}

// CSV is the manifest's carrier CSV: the header row, then exactly one row per label, in the
// manifest's order. Nothing else: no total row, no blank line.
func CSV(m Manifest) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(CSVHeader)
	for _, l := range m.Lines {
		w.Write([]string{cell(l.TrackingCode), cell(l.Service), l.ShipDate, number(l.WeightOz), number(l.LengthIn),
			number(l.WidthIn), number(l.HeightIn), cell(l.FromZip), cell(l.To.Name), cell(l.To.Street1), cell(l.To.City),
			cell(l.To.State), cell(l.To.Zip), cell(l.To.Country), cell(l.Reference)})
	}
	w.Flush()
	return b.Bytes()
}

func number(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// cell keeps text from being read as a formula by spreadsheet programs (CSV injection), as the
// invoice CSV does.
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
