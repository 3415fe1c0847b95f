package carrier

import "testing"

func TestZipSet(t *testing.T) {
	s := newZipSet([]string{"99501", "00501", "10001", "10001", "bad"})
	tests := []struct {
		zip  string
		want bool
	}{{"00501", true}, {"10001", true}, {"10001-1234", true}, {"99501", true}, {"10002", false}, {"1000", false}, {"bad00", false}}
	for _, tt := range tests {
		if got := s.has(tt.zip); got != tt.want {
			t.Errorf("has(%q) = %v; want %v", tt.zip, got, tt.want)
		}
	}
	if len(s) != 3 {
		t.Errorf("len = %d; want 3 (duplicates and invalid ZIPs left out)", len(s))
	}
}

func TestZoneChart(t *testing.T) {
	c := newZoneChart([]ZoneChartEntry{{"100", "200-299", 3}, {"005", "999", 8}, {"100", "300", 4}})
	tests := []struct {
		origin, dest, want int
	}{{100, 200, 3}, {100, 299, 3}, {100, 300, 4}, {100, 301, 0}, {5, 999, 8}, {6, 999, 0}, {-1, 200, 0}, {100, -1, 0}}
	for _, tt := range tests {
		if got := c.zone(tt.origin, tt.dest); got != tt.want {
			t.Errorf("zone(%d, %d) = %d; want %d", tt.origin, tt.dest, got, tt.want)
		}
	}
}
