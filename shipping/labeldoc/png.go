package labeldoc

import (
	"unicode/utf8"

	"github.com/waybill/waybill/shipping/raster"
)

// PNG draws the label as a 812 × 1218 px, 203 dpi, 1-bit PNG: a thermal printer's 4 × 6 in
// label, dot for dot. It is the label alone: an international label's customs declaration is
// printed from its PDF or ZPL.
func (d Document) PNG() ([]byte, error) {
	img := raster.New(labelWidth, labelHeight, labelDPI)
	if err := d.draw(pngCanvas{img}); err != nil {
		return nil, err
	}
	return img.PNG()
}

// pngCanvas draws the layout on a raster image, one dot per pixel. Text is a bitmap font drawn
// at the whole-pixel scale nearest its size; text too wide for its box is first drawn narrower
// (as thermal printer fonts are, down to half as wide as tall), then smaller, then cut.
type pngCanvas struct{ m *raster.Image }

func ink(white bool) raster.Ink {
	if white {
		return raster.White
	}
	return raster.Black
}

func (c pngCanvas) text(x, y, w, size int, bold bool, a align, white bool, s string) {
	font := raster.Regular()
	if bold {
		font = raster.Bold()
	}
	sy := max(1, (size+font.Height()/2)/font.Height())
	sx := sy
	for sx > 1 && font.Width(s)*sx > w {
		sx--
	}
	sy = min(sy, 2*sx)
	for font.Width(s)*sx > w && s != "" {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	tw := font.Width(s) * sx
	switch a {
	case alignCenter:
		x += (w - tw) / 2
	case alignRight:
		x += w - tw
	}
	c.m.Text(x, y, font, sx, sy, s, ink(white))
}

func (c pngCanvas) fill(x, y, w, h int, white bool) { c.m.Fill(x, y, w, h, ink(white)) }

func (c pngCanvas) box(x, y, w, h, thick int) { c.m.Box(x, y, w, h, thick, raster.Black) }

func (c pngCanvas) line(x1, y1, x2, y2, thick int) { c.m.Line(x1, y1, x2, y2, thick, raster.Black) }

func (c pngCanvas) barcode(x, y, module, height int, modules []int, _ string) {
	for i, m := range modules {
		if i%2 == 0 {
			c.m.Fill(x, y, m*module, height, raster.Black)
		}
		x += m * module
	}
}
