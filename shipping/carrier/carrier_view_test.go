package carrier

import "testing"

// TestCarrierView: the serials left count from the carrier's next serial, or from the range
// start in force when that is above it, and never go below zero; the version in force today is
// named beside the one shown, and null before any is in force.
func TestCarrierView(t *testing.T) {
	version := func(n int64, from string, start, end int64) *Version {
		c := &Card{Code: "X", EffectiveFrom: from}
		c.Tracking.RangeStart, c.Tracking.RangeEnd = start, end
		return &Version{Version: n, Card: c}
	}
	v1, v2 := version(1, "2026-01-01", 100, 199), version(2, "2026-12-01", 500, 599)
	tests := []struct {
		name          string
		next          int64
		shown         *Version
		today         string
		wantNext      int64
		wantRemaining int64
		wantInForce   int64 // 0: null
	}{
		{"nothing issued yet", 0, v1, "2026-11-26", 100, 100, 1},
		{"some issued", 150, v1, "2026-11-26", 150, 50, 1},
		{"range used up", 200, v1, "2026-11-26", 200, 0, 1},
		{"past the range", 260, v1, "2026-11-26", 260, 0, 1},
		{"a later range starts above the next serial", 150, v2, "2026-11-26", 500, 100, 1},
		{"before any version is in force", 0, v1, "2025-12-31", 100, 100, 0},
		{"the later version in force", 520, v2, "2026-12-01", 520, 80, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Stored{Code: "X", NextSerial: tt.next, Versions: []*Version{v1, v2}}
			got := c.View(tt.shown, tt.today)
			if got.Version != tt.shown.Version || got.Tracking.NextSerial != tt.wantNext || got.Tracking.Remaining != tt.wantRemaining {
				t.Errorf("View = version %d, next %d, remaining %d; want %d, %d, %d", got.Version, got.Tracking.NextSerial,
					got.Tracking.Remaining, tt.shown.Version, tt.wantNext, tt.wantRemaining)
			}
			if inForce := got.InForceVersion; tt.wantInForce == 0 && inForce != nil || tt.wantInForce != 0 && (inForce == nil || *inForce != tt.wantInForce) {
				t.Errorf("in_force_version = %v, want %d (0: null)", inForce, tt.wantInForce)
			}
			if len(got.Versions) != 2 || got.Versions[1].EffectiveFrom != "2026-12-01" {
				t.Errorf("versions = %+v", got.Versions)
			}
		})
	}
}
