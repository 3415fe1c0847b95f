package carrier

import (
	"slices"
	"strconv"

	"github.com/waybill/waybill/shipping"
)

// zoneChart is a card's zone chart compiled for quoting: its origin ZIP3s sorted, and for each
// the zone by destination ZIP3 (0 where the chart has none), a byte each: 1,000 bytes an origin
// however many entries the card lists for it.
type zoneChart struct {
	origins []uint16
	zones   []*[1000]uint8
}

// newZoneChart compiles valid entries; of overlapping ones (which Validate refuses), the last
// wins.
func newZoneChart(entries []ZoneChartEntry) zoneChart {
	var c zoneChart
	for _, e := range entries {
		o, ok := originOf(e)
		lo, hi, okDest := shipping.ParseZIP3Range(e.DestZip3)
		if !ok || !okDest {
			continue
		}
		i, found := slices.BinarySearch(c.origins, o)
		if !found {
			c.origins, c.zones = slices.Insert(c.origins, i, o), slices.Insert(c.zones, i, new([1000]uint8))
		}
		for z := lo; z <= hi; z++ {
			c.zones[i][z] = uint8(e.Zone)
		}
	}
	return c
}

// zone is the chart's zone from origin to dest (ZIP3 numbers); 0 when it has none.
func (c zoneChart) zone(origin, dest int) int {
	if origin < 0 || dest < 0 || dest >= 1000 {
		return 0
	}
	i, found := slices.BinarySearch(c.origins, uint16(origin))
	if !found {
		return 0
	}
	return int(c.zones[i][dest])
}

func originOf(e ZoneChartEntry) (uint16, bool) {
	if len(e.OriginZip3) != 3 || digitCount(e.OriginZip3) != 3 {
		return 0, false
	}
	return uint16(shipping.ZIP3Number(e.OriginZip3)), true
}

// checkChartOverlaps records every entry whose destinations overlap those of an earlier entry
// for the same origin: the chart would give a route two zones. The work is bounded by 1,000
// destinations an origin whatever the ranges: an entry's range is marked only up to its first
// overlap, and every destination is marked once.
func checkChartOverlaps(v *shipping.ValidationError, entries []ZoneChartEntry) {
	owners := map[uint16]*[1000]int32{} // entry index + 1 by destination, per origin
	for i, e := range entries {
		o, ok := originOf(e)
		lo, hi, okDest := shipping.ParseZIP3Range(e.DestZip3)
		if !ok || !okDest {
			continue // reported as invalid
		}
		owner := owners[o]
		if owner == nil {
			owner = new([1000]int32)
			owners[o] = owner
		}
		for z := lo; z <= hi; z++ {
			if j := owner[z]; j != 0 {
				v.Add("zone_chart["+strconv.Itoa(i)+"].dest_zip3", "overlap",
					"overlaps zone_chart["+strconv.Itoa(int(j-1))+"] for origin "+e.OriginZip3)
				break
			}
			owner[z] = int32(i + 1)
		}
	}
}
