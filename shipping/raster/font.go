package raster

import (
	"bufio"
	"bytes"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// The fonts are the X11 misc-fixed 10x20 and 9x18B bitmap fonts (public domain; see
// misc-fixed.COPYRIGHT and NOTICE), cut to ISO 8859-1 by subset.sh.
var (
	//go:embed 10x20.bdf
	regularBDF []byte
	//go:embed 9x18B.bdf
	boldBDF []byte
)

// Font is a bitmap font: one glyph per character, drawn at whole multiples of its pixel size.
type Font struct {
	ascent, descent int
	glyphs          map[rune]glyph
}

// glyph is one character's bitmap: rows of bits, most significant first, placed at (dx, dy)
// from the pen position on the baseline (dy is the bitmap's top, negative above the baseline).
type glyph struct {
	advance, dx, dy, w int
	rows               [][]byte
}

var (
	regular = sync.OnceValue(func() *Font { return mustParseBDF(regularBDF) })
	bold    = sync.OnceValue(func() *Font { return mustParseBDF(boldBDF) })
)

// Regular is misc-fixed 10x20: 20 px lines, 10 px wide characters.
func Regular() *Font { return regular() }

// Bold is misc-fixed 9x18 bold: 18 px lines, 9 px wide characters.
func Bold() *Font { return bold() }

// Height is the font's line height in pixels at scale 1: ascent plus descent.
func (f *Font) Height() int { return f.ascent + f.descent }

// Ascent is how far the font's tallest glyphs reach above the baseline at scale 1.
func (f *Font) Ascent() int { return f.ascent }

// Width is how wide s is drawn at scale 1, in pixels.
func (f *Font) Width(s string) int {
	n := 0
	for _, r := range s {
		n += f.glyph(r).advance
	}
	return n
}

// glyph returns r's glyph; characters the font lacks are drawn as '?', controls as spaces.
func (f *Font) glyph(r rune) glyph {
	if r < 0x20 || r == 0x7f {
		r = ' '
	}
	if g, ok := f.glyphs[r]; ok {
		return g
	}
	return f.glyphs['?']
}

func mustParseBDF(b []byte) *Font {
	f, err := parseBDF(b)
	if err != nil {
		panic("raster: embedded font: " + err.Error())
	}
	return f
}

// parseBDF reads the parts of a BDF 2.1 font a fixed-cell renderer needs: the font's ascent and
// descent, and each encoded glyph's advance, bounding box and bitmap.
func parseBDF(b []byte) (*Font, error) {
	f := &Font{glyphs: map[rune]glyph{}}
	sc := bufio.NewScanner(bytes.NewReader(b))
	var g glyph
	enc, height, inBitmap := -1, 0, false
	ints := func(fields []string, n int) ([]int, error) {
		if len(fields) < n+1 {
			return nil, fmt.Errorf("%s: want %d numbers", fields[0], n)
		}
		out := make([]int, n)
		for i := range out {
			v, err := strconv.Atoi(fields[i+1])
			if err != nil {
				return nil, fmt.Errorf("%s: %v", fields[0], err)
			}
			out[i] = v
		}
		return out, nil
	}
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if inBitmap {
			if fields[0] == "ENDCHAR" {
				inBitmap = false
				if enc >= 0 {
					f.glyphs[rune(enc)] = g
				}
				continue
			}
			row, err := hexBytes(fields[0])
			if err != nil {
				return nil, err
			}
			g.rows = append(g.rows, row)
			continue
		}
		var err error
		var v []int
		switch fields[0] {
		case "FONT_ASCENT":
			v, err = ints(fields, 1)
			if err == nil {
				f.ascent = v[0]
			}
		case "FONT_DESCENT":
			v, err = ints(fields, 1)
			if err == nil {
				f.descent = v[0]
			}
		case "STARTCHAR":
			g, enc = glyph{}, -1
		case "ENCODING":
			v, err = ints(fields, 1)
			if err == nil {
				enc = v[0]
			}
		case "DWIDTH":
			v, err = ints(fields, 2)
			if err == nil {
				g.advance = v[0]
			}
		case "BBX":
			v, err = ints(fields, 4)
			if err == nil {
				g.w, height, g.dx = v[0], v[1], v[2]
				g.dy = -(v[3] + height) // the bitmap's top row, from the baseline
			}
		case "BITMAP":
			inBitmap = true
		}
		if err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if f.ascent <= 0 || len(f.glyphs) == 0 {
		return nil, fmt.Errorf("no FONT_ASCENT or no glyphs")
	}
	if _, ok := f.glyphs['?']; !ok {
		return nil, fmt.Errorf("no glyph for '?'")
	}
	return f, nil
}

func hexBytes(s string) ([]byte, error) {
	if len(s)%2 != 0 {
		return nil, fmt.Errorf("bitmap row %q: odd length", s)
	}
	out := make([]byte, len(s)/2)
	for i := range out {
		v, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		if err != nil {
			return nil, fmt.Errorf("bitmap row %q: %v", s, err)
		}
		out[i] = byte(v)
	}
	return out, nil
}
