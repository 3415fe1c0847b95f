package rating

import (
	_ "embed"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/waybill/waybill/shipping"
)

//go:embed default_profile.json
var defaultProfileJSON []byte

// Profile is a rate shopping profile: which carriers are shopped, where each delivers, the
// sort centers parcels are injected at, area surcharges and known per-route zones.
type Profile struct {
	Key            string                       `json:"profile_key"`
	Name           string                       `json:"name"`
	Carriers       []string                     `json:"carriers"`
	SortCenters    []SortCenter                 `json:"sort_centers"`
	ZipCoverage    map[string][]string          `json:"zip_coverage"`
	ZipSurcharges  map[string]map[string]string `json:"zip_surcharges"`
	ZoneTNTMapping []ZoneTNT                    `json:"zone_tnt_mapping"`
	UpdatedAt      shipping.Timestamp           `json:"updated_at"`

	index *profileIndex
}

// SortCenter is a facility where parcels enter the carriers' networks.
type SortCenter struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Zip  string `json:"zip"`
}

// ZoneTNT is a route's zone and time in transit, overriding the distance-based zone.
type ZoneTNT struct {
	OriginZip3  string `json:"origin_zip3"`
	DestZip3    string `json:"dest_zip3"`
	Zone        int    `json:"zone"`
	TransitDays int    `json:"transit_days"`
}

// ProfileInput is the body of PUT /admin/rate_shopping_profiles/{key}.
type ProfileInput struct {
	Name           string                       `json:"name"`
	Carriers       []string                     `json:"carriers"`
	SortCenters    []SortCenter                 `json:"sort_centers"`
	ZipCoverage    map[string][]string          `json:"zip_coverage"`
	ZipSurcharges  map[string]map[string]string `json:"zip_surcharges"`
	ZoneTNTMapping []ZoneTNT                    `json:"zone_tnt_mapping"`
}

// Names reports whether the profile names carrier: shops it, or lists its coverage or
// surcharges.
func (in ProfileInput) Names(carrier string) bool {
	_, covered := in.ZipCoverage[carrier]
	_, surcharged := in.ZipSurcharges[carrier]
	return slices.Contains(in.Carriers, carrier) || covered || surcharged
}

// profileIndex is a profile compiled for fast lookups.
type profileIndex struct {
	coverage    map[string]*[1000]bool // carrier → covered ZIP3s; absent: everywhere
	sortCenters []int                  // ZIP3 of each sort center
	routes      map[int]ZoneTNT        // origin ZIP3 × 1000 + dest ZIP3
}

// sortCenterRadiusMiles is how far from a sort center a shipper may be and still be served by
// it.
const sortCenterRadiusMiles = 150

var profileKeyPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// DefaultProfile returns the profile that ships with waybill.
func DefaultProfile() ProfileInput {
	var in ProfileInput
	if err := json.Unmarshal(defaultProfileJSON, &in); err != nil {
		panic("shipping: default_profile.json: " + err.Error())
	}
	return in
}

// Bounds of a profile's collections. A longer one is refused whole (too_many) before any of
// its elements is checked, so validation and indexing stay linear in the body and the error
// list stays short.
const (
	maxProfileCarriers     = 100
	maxProfileSortCenters  = 1000
	maxProfileZip3Ranges   = 1000  // per carrier
	maxProfileSurcharges   = 50000 // ZIP5s per carrier
	maxProfileZoneMappings = 20000
)

// profileTooLarge reports the collections of in that exceed their bounds.
func profileTooLarge(in ProfileInput) error {
	var v shipping.ValidationError
	tooMany := v.TooMany
	tooMany("carriers", len(in.Carriers), maxProfileCarriers)
	tooMany("sort_centers", len(in.SortCenters), maxProfileSortCenters)
	tooMany("zip_coverage", len(in.ZipCoverage), maxProfileCarriers)
	tooMany("zip_surcharges", len(in.ZipSurcharges), maxProfileCarriers)
	tooMany("zone_tnt_mapping", len(in.ZoneTNTMapping), maxProfileZoneMappings)
	if v.Err() != nil {
		return v.Err()
	}
	for _, c := range sortedKeys(in.ZipCoverage) {
		tooMany("zip_coverage."+c, len(in.ZipCoverage[c]), maxProfileZip3Ranges)
	}
	for _, c := range sortedKeys(in.ZipSurcharges) {
		tooMany("zip_surcharges."+c, len(in.ZipSurcharges[c]), maxProfileSurcharges)
	}
	return v.Err()
}

// NewProfile validates in against the known carriers and returns the profile it describes.
func NewProfile(key string, in ProfileInput, knownCarriers []string, updatedAt time.Time) (*Profile, error) {
	if err := profileTooLarge(in); err != nil {
		return nil, err
	}
	var v shipping.ValidationError
	if !profileKeyPattern.MatchString(key) {
		v.Add("profile_key", "invalid", "must be 1 to 64 lowercase letters, digits, - or _, starting with a letter or digit")
	}
	in.Name = strings.TrimSpace(in.Name)
	if in.Name == "" {
		v.Add("name", "required", "is required")
	} else if len(in.Name) > 200 {
		v.Add("name", "too_long", "must be at most 200 characters")
	}
	validateCarriers(&v, in.Carriers, knownCarriers)
	validateSortCenters(&v, in.SortCenters)
	validateCoverage(&v, in)
	validateSurcharges(&v, in)
	validateZoneMappings(&v, in.ZoneTNTMapping)
	if err := v.Err(); err != nil {
		return nil, err
	}
	return LoadProfile(key, in, updatedAt), nil
}

// validateCarriers checks that the profile shops at least one carrier, each known and listed
// once.
func validateCarriers(v *shipping.ValidationError, carriers, knownCarriers []string) {
	if len(carriers) == 0 {
		v.Add("carriers", "required", "must list at least one carrier")
	}
	for i, c := range carriers {
		f := "carriers." + strconv.Itoa(i)
		switch {
		case !slices.Contains(knownCarriers, c):
			v.Add(f, "unknown_carrier", "is not a known carrier")
		case slices.Index(carriers, c) != i:
			v.Add(f, "duplicate", "is listed twice")
		}
	}
}

// validateSortCenters checks each sort center's id (unique), name and ZIP code.
func validateSortCenters(v *shipping.ValidationError, centers []SortCenter) {
	ids := map[string]bool{}
	for i, sc := range centers {
		f := "sort_centers." + strconv.Itoa(i)
		if sc.ID == "" || len(sc.ID) > 64 {
			v.Add(f+".id", "required", "must be 1 to 64 characters")
		} else if ids[sc.ID] {
			v.Add(f+".id", "duplicate", "is used twice")
		}
		ids[sc.ID] = true
		if strings.TrimSpace(sc.Name) == "" || len(sc.Name) > 200 {
			v.Add(f+".name", "required", "must be 1 to 200 characters")
		}
		if !shipping.KnownZIP(sc.Zip) {
			v.Add(f+".zip", "unknown_zip", "is not a known US ZIP code")
		}
	}
}

// validateCoverage checks zip_coverage: for the profile's carriers, ZIP3s and ranges of them.
func validateCoverage(v *shipping.ValidationError, in ProfileInput) {
	for _, c := range sortedKeys(in.ZipCoverage) {
		f := "zip_coverage." + c
		if !slices.Contains(in.Carriers, c) {
			v.Add(f, "unknown_carrier", "is not one of the profile's carriers")
			continue
		}
		for i, r := range in.ZipCoverage[c] {
			if _, _, ok := shipping.ParseZIP3Range(r); !ok {
				v.Add(f+"."+strconv.Itoa(i), "invalid", `must be a ZIP3 ("900") or a range of them ("900-935")`)
			}
		}
	}
}

// validateSurcharges checks zip_surcharges: for the profile's carriers, known five-digit ZIPs
// designated DAS or EDAS.
func validateSurcharges(v *shipping.ValidationError, in ProfileInput) {
	for _, c := range sortedKeys(in.ZipSurcharges) {
		f := "zip_surcharges." + c
		if !slices.Contains(in.Carriers, c) {
			v.Add(f, "unknown_carrier", "is not one of the profile's carriers")
			continue
		}
		for _, zip := range sortedKeys(in.ZipSurcharges[c]) {
			if len(zip) != 5 || !shipping.KnownZIP(zip) {
				v.Add(f+"."+zip, "unknown_zip", "is not a known five-digit US ZIP code")
			} else if d := in.ZipSurcharges[c][zip]; d != "DAS" && d != "EDAS" {
				v.Add(f+"."+zip, "invalid", "must be DAS or EDAS")
			}
		}
	}
}

// validateZoneMappings checks zone_tnt_mapping: known ZIP3s, zones 1 to 8, transit days 1 to
// 30, and each route once.
func validateZoneMappings(v *shipping.ValidationError, mappings []ZoneTNT) {
	routes := map[string]bool{}
	for i, m := range mappings {
		f := "zone_tnt_mapping." + strconv.Itoa(i)
		o, d := zip3Of(m.OriginZip3), zip3Of(m.DestZip3)
		if o < 0 {
			v.Add(f+".origin_zip3", "invalid", "must be a known ZIP3")
		}
		if d < 0 {
			v.Add(f+".dest_zip3", "invalid", "must be a known ZIP3")
		}
		if m.Zone < 1 || m.Zone > 8 {
			v.Add(f+".zone", "out_of_range", "must be from 1 to 8")
		}
		if m.TransitDays < 1 || m.TransitDays > 30 {
			v.Add(f+".transit_days", "out_of_range", "must be from 1 to 30")
		}
		if route := m.OriginZip3 + "-" + m.DestZip3; routes[route] {
			v.Add(f, "duplicate", "repeats the route "+route)
		} else {
			routes[route] = true
		}
	}
}

// Input returns the profile's editable part.
func (p *Profile) Input() ProfileInput {
	return ProfileInput{Name: p.Name, Carriers: p.Carriers, SortCenters: p.SortCenters, ZipCoverage: p.ZipCoverage,
		ZipSurcharges: p.ZipSurcharges, ZoneTNTMapping: p.ZoneTNTMapping}
}

// normalize makes absent collections empty, so they are written as [] and {}.
func (p *Profile) normalize() {
	if p.SortCenters == nil {
		p.SortCenters = []SortCenter{}
	}
	if p.ZipCoverage == nil {
		p.ZipCoverage = map[string][]string{}
	}
	if p.ZipSurcharges == nil {
		p.ZipSurcharges = map[string]map[string]string{}
	}
	if p.ZoneTNTMapping == nil {
		p.ZoneTNTMapping = []ZoneTNT{}
	}
}

func (p *Profile) buildIndex() *profileIndex {
	ix := &profileIndex{coverage: map[string]*[1000]bool{}, routes: map[int]ZoneTNT{}}
	for c, ranges := range p.ZipCoverage {
		var cov [1000]bool
		for _, r := range ranges {
			lo, hi, _ := shipping.ParseZIP3Range(r)
			for z := lo; z <= hi; z++ {
				cov[z] = true
			}
		}
		ix.coverage[c] = &cov
	}
	for _, sc := range p.SortCenters {
		ix.sortCenters = append(ix.sortCenters, shipping.ZIP3Number(sc.Zip))
	}
	for _, m := range p.ZoneTNTMapping {
		ix.routes[zip3Of(m.OriginZip3)*1000+zip3Of(m.DestZip3)] = m
	}
	return ix
}

func (p *Profile) idx() *profileIndex {
	if p.index == nil {
		p.index = p.buildIndex()
	}
	return p.index
}

// Covers reports whether carrier delivers to the ZIP3 dest under the profile. A carrier without
// a zip_coverage entry delivers everywhere.
func (p *Profile) Covers(carrier string, dest int) bool {
	cov, ok := p.idx().coverage[carrier]
	if !ok {
		return true
	}
	return dest >= 0 && dest < 1000 && cov[dest]
}

// AreaSurcharge is the destination ZIP's DAS or EDAS designation for carrier, or "";
// listed reports whether the profile lists the carrier's surcharge ZIPs at all (its list then
// replaces the carrier's own).
func (p *Profile) AreaSurcharge(carrier, zip string) (designation string, listed bool) {
	m, listed := p.ZipSurcharges[carrier]
	if len(zip) < 5 {
		return "", listed
	}
	return m[zip[:5]], listed
}

// ZoneOrigin is where a parcel from the ZIP3 origin enters the network, as a ZIP3: the
// profile's nearest sort center when one lies within 150 miles of the origin (the shipper
// drops parcels there), else the origin itself (the carrier picks up).
func (p *Profile) ZoneOrigin(origin int) int {
	best, bestMiles := origin, float64(sortCenterRadiusMiles)
	for _, sc := range p.idx().sortCenters {
		if d, ok := shipping.ZIP3Distance(origin, sc); ok && d <= bestMiles {
			best, bestMiles = sc, d
		}
	}
	return best
}

// Zone is the zone from the ZIP3 origin to the ZIP3 dest: the profile's zone_tnt_mapping for
// the route from the zone origin (see ZoneOrigin) when it has one, with its transit days;
// (mapped true); else the USPS distance band of the great-circle distance between the ZIP3
// centroids, and transitDays 0. ok is false when a ZIP3 is unknown.
func (p *Profile) Zone(origin, dest int) (zone, transitDays int, mapped, ok bool) {
	from := p.ZoneOrigin(origin)
	if m, found := p.idx().routes[from*1000+dest]; found {
		return m.Zone, m.TransitDays, true, true
	}
	miles, ok := shipping.ZIP3Distance(from, dest)
	if !ok {
		return 0, 0, false, false
	}
	return shipping.ZoneForDistance(miles), 0, false, true
}

// zip3Of parses a three-digit ZIP3 that the table knows; -1 otherwise.
func zip3Of(s string) int {
	// Any ZIP code of a ZIP3 the table knows is a known ZIP: s followed by "00" is one.
	if len(s) != 3 || !shipping.KnownZIP(s+"00") {
		return -1
	}
	return shipping.ZIP3Number(s)
}

// SameCoverage reports whether two zip_coverage maps are the same.
func SameCoverage(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// LoadProfile returns a stored profile without validating it again.
func LoadProfile(key string, in ProfileInput, updatedAt time.Time) *Profile {
	p := &Profile{Key: key, Name: in.Name, Carriers: in.Carriers, SortCenters: in.SortCenters, ZipCoverage: in.ZipCoverage,
		ZipSurcharges: in.ZipSurcharges, ZoneTNTMapping: in.ZoneTNTMapping, UpdatedAt: shipping.Timestamp{Time: updatedAt}}
	p.normalize()
	p.index = p.buildIndex()
	return p
}
