// Command cardgen writes carrier cards of a real contract's size, reproducibly from a seed, for
// measuring how waybill stores, compiles and quotes them (.ci/cards), and hostile cards that
// must be refused whole. It uses the standard library only and is built outside the module
// (GO111MODULE=off), as .ci/loadhelper is.
//
//	cardgen [-seed 1] [-carriers 20] [-origins 3] [-das 15000] [-edas 5000] [-services 10]
//	        [-breaks 150] [-fuel 52] [-coverage 100] [-out DIR]
//
// writes DIR/card-NN.json (carrier RS01…RSnn, each with its own luhn prefix so their tracking
// ranges never overlap) and DIR/bad/*: junk.json (16 MiB of junk), bomb.json.gz (a gzip bomb:
// 1 MB that inflates to 1 GiB), chart-100001.json (a zone chart one entry too long),
// dup-zips.json (a DAS ZIP listed twice) and chart-overlap.json (two chart entries whose
// destination ranges overlap for one origin).
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"
)

type card struct {
	Code           string         `json:"code"`
	Name           string         `json:"name"`
	EffectiveFrom  string         `json:"effective_from,omitempty"`
	DimFactor      int            `json:"dim_factor"`
	FuelSurcharges []fuel         `json:"fuel_surcharges"`
	DASCents       int64          `json:"das_cents"`
	EDASCents      int64          `json:"edas_cents"`
	DASZips        []string       `json:"das_zips"`
	EDASZips       []string       `json:"edas_zips"`
	Coverage       []string       `json:"coverage"`
	ZoneChart      []chartEntry   `json:"zone_chart"`
	Tracking       map[string]any `json:"tracking"`
	Services       []service      `json:"services"`
}

type fuel struct {
	EffectiveFrom string  `json:"effective_from"`
	Percent       float64 `json:"percent"`
}

type chartEntry struct {
	OriginZip3 string `json:"origin_zip3"`
	DestZip3   string `json:"dest_zip3"`
	Zone       int    `json:"zone"`
}

type service struct {
	Code           string    `json:"code"`
	Name           string    `json:"name"`
	Expedited      bool      `json:"expedited"`
	TransitDays    []int     `json:"transit_days"`
	WeightBreaksOz []int64   `json:"weight_breaks_oz"`
	PricesCents    [][]int64 `json:"prices_cents"`
}

func main() {
	seed := flag.Uint64("seed", 1, "random seed: the same seed writes the same cards")
	carriers := flag.Int("carriers", 20, "how many carriers")
	origins := flag.Int("origins", 3, "origin ZIP3s in each zone chart (about 900 destinations each)")
	das := flag.Int("das", 15000, "DAS ZIPs per card")
	edas := flag.Int("edas", 5000, "EDAS ZIPs per card")
	services := flag.Int("services", 10, "services per card")
	breaks := flag.Int("breaks", 150, "weight breaks per service")
	fuels := flag.Int("fuel", 52, "fuel entries (one a week)")
	coverage := flag.Int("coverage", 100, "coverage ranges")
	out := flag.String("out", "cards", "output folder")
	flag.Parse()

	r := rand.New(rand.NewPCG(*seed, *seed^0x9e3779b97f4a7c15))
	must(os.MkdirAll(filepath.Join(*out, "bad"), 0o755))
	var first card
	for i := 1; i <= *carriers; i++ {
		c := makeCard(r, i, *origins, *das, *edas, *services, *breaks, *fuels, *coverage)
		if i == 1 {
			first = c
		}
		write(filepath.Join(*out, fmt.Sprintf("card-%02d.json", i)), c)
	}
	writeBad(filepath.Join(*out, "bad"), first)
}

// makeCard is carrier number i's card.
func makeCard(r *rand.Rand, i, origins, das, edas, services, breaks, fuels, coverage int) card {
	c := card{
		Code:      fmt.Sprintf("RS%02d", i),
		Name:      fmt.Sprintf("Real Size %d", i),
		DimFactor: 139,
		DASCents:  395, EDASCents: 510,
		Tracking: map[string]any{"scheme": "luhn", "prefix": fmt.Sprintf("R%c", 'A'+rune(i-1)%26) + string(rune('A'+(i-1)/26)),
			"digits": 14, "range_start": 1, "range_end": 99999999999999},
	}
	zips := distinctZips(r, das+edas)
	c.DASZips, c.EDASZips = sorted(zips[:das]), sorted(zips[das:])
	monday := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	for w := 0; w < fuels; w++ {
		day := monday.AddDate(0, 0, 7*w).Format(time.DateOnly)
		c.FuelSurcharges = append(c.FuelSurcharges, fuel{day, float64(1000+r.IntN(800)) / 100})
	}
	// Coverage: ranges of ZIP3s that do not overlap, covering most of the country.
	step := 999 / coverage
	for k := 0; k < coverage; k++ {
		lo := 5 + k*step
		hi := lo + step - 1 - r.IntN(2)
		c.Coverage = append(c.Coverage, fmt.Sprintf("%03d-%03d", lo, hi))
	}
	// Zone chart: each origin maps every destination ZIP3 from 005 to 999 (about 900 used).
	for o := 0; o < origins; o++ {
		origin := fmt.Sprintf("%03d", 100+o*40)
		for d := 5; d < 1000; d++ {
			if d%10 == 3 && r.IntN(10) == 0 {
				continue // a few ZIP3s are not in use
			}
			c.ZoneChart = append(c.ZoneChart, chartEntry{origin, fmt.Sprintf("%03d", d), 1 + r.IntN(8)})
		}
	}
	for s := 0; s < services; s++ {
		sv := service{Code: fmt.Sprintf("SVC_%02d", s), Name: fmt.Sprintf("Service %d", s), Expedited: s%3 == 0}
		for z := 0; z < 8; z++ {
			sv.TransitDays = append(sv.TransitDays, 1+z/2+s%3)
		}
		for b := 1; b <= breaks; b++ {
			sv.WeightBreaksOz = append(sv.WeightBreaksOz, int64(b*16))
			row := make([]int64, 8)
			for z := range row {
				row[z] = int64(500 + b*40 + z*60 + s*25 + r.IntN(20))
			}
			sv.PricesCents = append(sv.PricesCents, row)
		}
		c.Services = append(c.Services, sv)
	}
	return c
}

// writeBad writes the hostile cards, each derived from good.
func writeBad(dir string, good card) {
	junk := make([]byte, 16<<20)
	for i := range junk {
		junk[i] = "{[\"a1,:}]"[i%9]
	}
	must(os.WriteFile(filepath.Join(dir, "junk.json"), junk, 0o644))

	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zeros := make([]byte, 1<<20)
	for i := 0; i < 1024; i++ {
		zw.Write(zeros)
	}
	zw.Close()
	must(os.WriteFile(filepath.Join(dir, "bomb.json.gz"), bomb.Bytes(), 0o644))

	long := good
	long.ZoneChart = nil
	for o := 0; len(long.ZoneChart) < 100001; o++ {
		for d := 5; d < 1000 && len(long.ZoneChart) < 100001; d++ {
			long.ZoneChart = append(long.ZoneChart, chartEntry{fmt.Sprintf("%03d", o%1000), fmt.Sprintf("%03d", d), 1 + d%8})
		}
	}
	write(filepath.Join(dir, "chart-100001.json"), long)

	dup := good
	dup.DASZips = append(slices.Clone(good.DASZips), good.DASZips[0])
	write(filepath.Join(dir, "dup-zips.json"), dup)

	overlap := good
	overlap.ZoneChart = append(slices.Clone(good.ZoneChart),
		chartEntry{good.ZoneChart[0].OriginZip3, "010-020", 5})
	write(filepath.Join(dir, "chart-overlap.json"), overlap)
}

// distinctZips is n distinct five-digit ZIPs.
func distinctZips(r *rand.Rand, n int) []string {
	seen := make(map[int]bool, n)
	out := make([]string, 0, n)
	for len(out) < n {
		z := 501 + r.IntN(99950-501)
		if !seen[z] {
			seen[z] = true
			out = append(out, fmt.Sprintf("%05d", z))
		}
	}
	return out
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func write(path string, c card) {
	b, err := json.Marshal(c)
	must(err)
	must(os.WriteFile(path, b, 0o644))
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "cardgen:", err)
		os.Exit(1)
	}
}
