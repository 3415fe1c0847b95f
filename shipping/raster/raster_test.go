package raster

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
)

func TestFonts(t *testing.T) {
	tests := []struct {
		name           string
		f              *Font
		height, ascent int
		advance        int
	}{
		{"10x20", Regular(), 20, 16, 10},
		{"9x18B", Bold(), 18, 14, 9},
	}
	for _, tt := range tests {
		if tt.f.Height() != tt.height || tt.f.Ascent() != tt.ascent {
			t.Errorf("%s: height %d, ascent %d; want %d, %d", tt.name, tt.f.Height(), tt.f.Ascent(), tt.height, tt.ascent)
		}
		// Printable ASCII and Latin-1 are all there; anything else is drawn as '?'.
		for r := rune(0x20); r <= 0xff; r++ {
			if r == 0x7f {
				r = 0xa0
			}
			if _, ok := tt.f.glyphs[r]; !ok {
				t.Errorf("%s lacks %q", tt.name, r)
			}
		}
		if got := tt.f.Width("Zoë 7"); got != 5*tt.advance {
			t.Errorf("%s: Width(%q) = %d; want %d", tt.name, "Zoë 7", got, 5*tt.advance)
		}
		if q, snow := tt.f.glyph('?'), tt.f.glyph('☃'); !equalGlyph(q, snow) {
			t.Errorf("%s: a character the font lacks is not drawn as '?'", tt.name)
		}
	}
}

func equalGlyph(a, b glyph) bool {
	return a.advance == b.advance && bytes.Equal(bytes.Join(a.rows, nil), bytes.Join(b.rows, nil))
}

func TestParseBDFErrors(t *testing.T) {
	for _, bdf := range []string{
		"",
		"FONT_ASCENT 10\n",
		"FONT_ASCENT x\n",
		"FONT_ASCENT 2\nSTARTCHAR a\nENCODING 97\nDWIDTH 2 0\nBBX 2 2 0 0\nBITMAP\nC0\n80\nENDCHAR\n", // no '?'
		"FONT_ASCENT 2\nSTARTCHAR q\nENCODING 63\nDWIDTH 2 0\nBBX 2 2 0 0\nBITMAP\nC\nENDCHAR\n",      // odd hex
	} {
		if _, err := parseBDF([]byte(bdf)); err == nil {
			t.Errorf("parseBDF(%q) succeeded; want an error", bdf)
		}
	}
}

func TestText(t *testing.T) {
	// A one-glyph font: '?' is a 2 × 2 block with a hole at the bottom right, sitting on the
	// baseline.
	f, err := parseBDF([]byte("FONT_ASCENT 2\nFONT_DESCENT 0\nSTARTCHAR q\nENCODING 63\nDWIDTH 3 0\nBBX 2 2 0 0\nBITMAP\nC0\n80\nENDCHAR\n"))
	if err != nil {
		t.Fatal(err)
	}
	m := New(8, 6, 0)
	end := m.Text(1, 5, f, 2, 2, "?", Black)
	if end != 7 {
		t.Errorf("Text ended at x %d; want 7", end)
	}
	want := []string{
		"........",
		".####...",
		".####...",
		".##.....",
		".##.....",
		"........",
	}
	if got := picture(m); got != strings.Join(want, "\n") {
		t.Errorf("Text drew\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	m = New(8, 6, 0)
	if end := m.Text(1, 5, f, 1, 2, "??", Black); end != 7 {
		t.Errorf("narrow Text ended at x %d; want 7", end)
	}
	want = []string{
		"........",
		".##.##..",
		".##.##..",
		".#..#...",
		".#..#...",
		"........",
	}
	if got := picture(m); got != strings.Join(want, "\n") {
		t.Errorf("narrow Text drew\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}

func TestShapes(t *testing.T) {
	m := New(8, 6, 0)
	m.Box(0, 0, 8, 6, 1, Black)
	m.Fill(2, 2, 10, 10, Black) // clipped
	m.Fill(3, 3, 1, 1, White)
	m.Line(-5, -5, -1, -1, 3, Black) // off the picture
	want := []string{
		"########",
		"#......#",
		"#.######",
		"#.#.####",
		"#.######",
		"########",
	}
	if got := picture(m); got != strings.Join(want, "\n") {
		t.Errorf("drew\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	m = New(7, 7, 0)
	m.Line(0, 0, 6, 6, 1, Black)
	if got, want := picture(m), "#......\n.#.....\n..#....\n...#...\n....#..\n.....#.\n......#"; got != want {
		t.Errorf("diagonal line drew\n%s\nwant\n%s", got, want)
	}
}

func picture(m *Image) string {
	var rows []string
	for y := 0; y < m.img.Rect.Dy(); y++ {
		var b strings.Builder
		for x := 0; x < m.img.Rect.Dx(); x++ {
			if m.img.ColorIndexAt(x, y) == uint8(Black) {
				b.WriteByte('#')
			} else {
				b.WriteByte('.')
			}
		}
		rows = append(rows, b.String())
	}
	return strings.Join(rows, "\n")
}

func TestPNG(t *testing.T) {
	m := New(812, 1218, 203)
	m.Fill(10, 10, 20, 20, Black)
	b, err := m.PNG()
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b)) // also checks every chunk's CRC
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 812 || img.Bounds().Dy() != 1218 {
		t.Errorf("decoded %v; want 812x1218", img.Bounds())
	}
	if r, _, _, _ := img.At(15, 15).RGBA(); r != 0 {
		t.Errorf("pixel (15, 15) is %d; want black", r)
	}
	if !bytes.Contains(b, []byte("\x00\x00\x00\x09pHYs\x00\x00\x1f\x38\x00\x00\x1f\x38\x01")) {
		t.Error("no pHYs chunk stating 7992 pixels per metre (203 dpi)")
	}
	// One bit per pixel: IHDR's bit depth.
	if b[24] != 1 {
		t.Errorf("bit depth %d; want 1", b[24])
	}
	b0, _ := New(4, 4, 0).PNG()
	if bytes.Contains(b0, []byte("pHYs")) {
		t.Error("an image without a resolution got a pHYs chunk")
	}
}
