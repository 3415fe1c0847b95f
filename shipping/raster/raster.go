// Package raster draws black-and-white pictures for thermal printers with the standard library
// alone: filled boxes, thick lines, text in embedded bitmap fonts at whole-pixel scales, and
// writes them as 1-bit PNG files carrying their resolution. It is what PNG labels are drawn
// with; every edge falls on a pixel, so a barcode drawn at a whole number of pixels per module
// stays crisp and scans.
package raster

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
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
// a printer or viewer sizes it right (812 × 1218 px at 203 dpi is 4 × 6 in). It writes the
// chunks itself: image/png reads a paletted image pixel by pixel through an interface, which
// took most of a label's rendering time; packing the rows directly is several times faster.
func (m *Image) PNG() ([]byte, error) {
	w, h := m.img.Rect.Dx(), m.img.Rect.Dy()
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(w))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(h))
	ihdr = append(ihdr, 1, 0, 0, 0, 0) // bit depth 1, grayscale, deflate, no filter, no interlace
	writeChunk(&out, "IHDR", ihdr)
	if m.dpi > 0 {
		ppm := uint32(math.Round(float64(m.dpi) / 0.0254))
		phys := binary.BigEndian.AppendUint32(nil, ppm)
		phys = binary.BigEndian.AppendUint32(phys, ppm)
		writeChunk(&out, "pHYs", append(phys, 1)) // unit: metre
	}
	// Each row: filter type 0, then the pixels packed eight to a byte, 1 for white. The
	// picture is mostly long white runs, which the fastest level compresses nearly as well
	// as the best (6 KB against 4 KB for a label) in a fraction of the time.
	var data bytes.Buffer
	zw, err := zlib.NewWriterLevel(&data, zlib.BestSpeed)
	if err != nil {
		return nil, err
	}
	row := make([]byte, 1+(w+7)/8)
	for y := 0; y < h; y++ {
		clear(row)
		pix := m.img.Pix[y*m.img.Stride : y*m.img.Stride+w]
		for x, p := range pix {
			if Ink(p) == White {
				row[1+x/8] |= 0x80 >> (x % 8)
			}
		}
		if _, err := zw.Write(row); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	writeChunk(&out, "IDAT", data.Bytes())
	writeChunk(&out, "IEND", nil)
	return out.Bytes(), nil
}

// writeChunk appends a PNG chunk: length, type, data and the CRC of type and data.
func writeChunk(out *bytes.Buffer, typ string, data []byte) {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(data)))
	out.Write(n[:])
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	out.WriteString(typ)
	out.Write(data)
	binary.BigEndian.PutUint32(n[:], crc.Sum32())
	out.Write(n[:])
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
