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
	p := bdfParser{f: &Font{glyphs: map[rune]glyph{}}, enc: -1}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		var err error
		if p.inBitmap {
			err = p.bitmapLine(fields)
		} else {
			err = p.keyword(fields)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	f := p.f
	if f.ascent <= 0 || len(f.glyphs) == 0 {
		return nil, fmt.Errorf("no FONT_ASCENT or no glyphs")
	}
	if _, ok := f.glyphs['?']; !ok {
		return nil, fmt.Errorf("no glyph for '?'")
	}
	return f, nil
}

// bdfParser is where parseBDF has got to: the font so far, and the glyph being read with its
// encoding (-1 for none).
type bdfParser struct {
	f        *Font
	g        glyph
	enc      int
	inBitmap bool
}

// bitmapLine reads a line between BITMAP and ENDCHAR: a row of the glyph's bitmap, or the end
// of the glyph, which the font keeps if it has an encoding.
func (p *bdfParser) bitmapLine(fields []string) error {
	if fields[0] == "ENDCHAR" {
		p.inBitmap = false
		if p.enc >= 0 {
			p.f.glyphs[rune(p.enc)] = p.g
		}
		return nil
	}
	row, err := hexBytes(fields[0])
	if err != nil {
		return err
	}
	p.g.rows = append(p.g.rows, row)
	return nil
}

// keyword reads a line outside a bitmap; keywords a fixed-cell renderer does not need are
// skipped.
func (p *bdfParser) keyword(fields []string) error {
	var err error
	var v []int
	switch fields[0] {
	case "FONT_ASCENT":
		v, err = bdfInts(fields, 1)
		if err == nil {
			p.f.ascent = v[0]
		}
	case "FONT_DESCENT":
		v, err = bdfInts(fields, 1)
		if err == nil {
			p.f.descent = v[0]
		}
	case "STARTCHAR":
		p.g, p.enc = glyph{}, -1
	case "ENCODING":
		v, err = bdfInts(fields, 1)
		if err == nil {
			p.enc = v[0]
		}
	case "DWIDTH":
		v, err = bdfInts(fields, 2)
		if err == nil {
			p.g.advance = v[0]
		}
	case "BBX":
		v, err = bdfInts(fields, 4)
		if err == nil {
			width, height, xOff, yOff := v[0], v[1], v[2], v[3]
			p.g.w, p.g.dx = width, xOff
			p.g.dy = -(yOff + height) // the bitmap's top row, from the baseline
		}
	case "BITMAP":
		p.inBitmap = true
	}
	return err
}

// bdfInts reads the n numbers that follow a line's keyword.
func bdfInts(fields []string, n int) ([]int, error) {
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
