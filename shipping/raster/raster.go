// Package raster draws black-and-white pictures for thermal printers with the standard library
// alone: filled boxes, thick lines, text in embedded bitmap fonts at whole-pixel scales, and
// writes them as 1-bit PNG files carrying their resolution. It is what PNG labels are drawn
// with; every edge falls on a pixel, so a barcode drawn at a whole number of pixels per module
// stays crisp and scans.
package raster

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"math"
)

// Image is a white picture to draw black (or white) on. Coordinates are pixels from the
// top-left corner; whatever falls outside is clipped.
type Image struct {
	img *image.Paletted
	dpi int
}

// Ink is what a drawing leaves: Black on white, or White to clear or to write reversed text.
type Ink uint8

const (
	White Ink = 0
	Black Ink = 1
)

var palette = color.Palette{color.Gray{Y: 0xff}, color.Gray{Y: 0}}

// New returns a white image of w × h pixels printed at dpi dots per inch.
func New(w, h, dpi int) *Image {
	return &Image{img: image.NewPaletted(image.Rect(0, 0, w, h), palette), dpi: dpi}
}

// Bounds is the image's rectangle.
func (m *Image) Bounds() image.Rectangle { return m.img.Rect }

// Image returns the picture (index 0 white, 1 black).
func (m *Image) Image() image.Image { return m.img }

// Fill paints the rectangle x, y, w, h with ink.
func (m *Image) Fill(x, y, w, h int, ink Ink) {
	r := image.Rect(x, y, x+w, y+h).Intersect(m.img.Rect)
	for yy := r.Min.Y; yy < r.Max.Y; yy++ {
		row := m.img.Pix[yy*m.img.Stride:]
		for xx := r.Min.X; xx < r.Max.X; xx++ {
			row[xx] = uint8(ink)
		}
	}
}

// Box draws the outline of the rectangle x, y, w, h, thick pixels wide, inside it.
func (m *Image) Box(x, y, w, h, thick int, ink Ink) {
	thick = min(thick, w/2+1, h/2+1)
	m.Fill(x, y, w, thick, ink)
	m.Fill(x, y+h-thick, w, thick, ink)
	m.Fill(x, y, thick, h, ink)
	m.Fill(x+w-thick, y, thick, h, ink)
}

// Line draws a line from (x1, y1) to (x2, y2), thick pixels wide at any angle, by stamping a
// disc along it.
func (m *Image) Line(x1, y1, x2, y2, thick int, ink Ink) {
	r := float64(thick) / 2
	var spans []int // the disc's half width on each row, from its top
	for dy := -thick / 2; dy <= thick/2; dy++ {
		spans = append(spans, int(math.Sqrt(max(0, r*r-float64(dy*dy)))))
	}
	steps := max(abs(x2-x1), abs(y2-y1), 1)
	for i := 0; i <= steps; i++ {
		t := float64(i) / float64(steps)
		x := int(math.Round(float64(x1) + t*float64(x2-x1)))
		y := int(math.Round(float64(y1) + t*float64(y2-y1)))
		for j, half := range spans {
			m.Fill(x-half, y-thick/2+j, 2*half+1, 1, ink)
		}
	}
}

// Text draws s with its baseline at y starting at x, each font pixel drawn as a block sx
// pixels wide and sy tall. It returns the x where the text ends.
func (m *Image) Text(x, y int, f *Font, sx, sy int, s string, ink Ink) int {
	sx, sy = max(1, sx), max(1, sy)
	for _, r := range s {
		g := f.glyph(r)
		for row, bits := range g.rows {
			for col := 0; col < g.w; col++ {
				if bits[col/8]&(0x80>>(col%8)) != 0 {
					m.Fill(x+(g.dx+col)*sx, y+(g.dy+row)*sy, sx, sy, ink)
				}
			}
		}
		x += g.advance * sx
	}
	return x
}

// PNG encodes the image as a 1-bit grayscale PNG with a pHYs chunk stating its resolution, so
// a printer or viewer sizes it right (812 × 1218 px at 203 dpi is 4 × 6 in).
func (m *Image) PNG() ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, m.img); err != nil {
		return nil, err
	}
	if m.dpi <= 0 {
		return buf.Bytes(), nil
	}
	// The encoder writes no pHYs; it goes right after IHDR (8-byte signature, then IHDR's
	// 4-byte length, 4-byte type, 13 bytes of data and 4-byte CRC).
	b := buf.Bytes()
	const afterIHDR = 8 + 4 + 4 + 13 + 4
	ppm := uint32(math.Round(float64(m.dpi) / 0.0254))
	data := binary.BigEndian.AppendUint32(nil, ppm)
	data = binary.BigEndian.AppendUint32(data, ppm)
	data = append(data, 1) // unit: metre
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	chunk = append(chunk, "pHYs"...)
	chunk = append(chunk, data...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(chunk[4:]))
	out := make([]byte, 0, len(b)+len(chunk))
	out = append(out, b[:afterIHDR]...)
	out = append(out, chunk...)
	return append(out, b[afterIHDR:]...), nil
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
