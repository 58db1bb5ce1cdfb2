package report

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/addrclean/addrclean/internal/needs"
)

// chromium finds Debian's chromium. Outside CI a missing browser skips the
// browser tests (counted by make test's last line); under CI (CI=true) it
// fails them, so they cannot silently stop running.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	needs.Missing(t, "chromium", "apt-get install -y chromium", "the browser tests of the report")
	return ""
}

// render opens page in headless chromium and returns the screenshot and the
// console messages the page raised.
func render(t *testing.T, bin, page string, w, h int) (image.Image, []string) {
	t.Helper()
	dir := t.TempDir()
	html := filepath.Join(dir, "page.html")
	if err := os.WriteFile(html, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "shot.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--screenshot="+shot,
		"--window-size="+strconv.Itoa(w)+","+strconv.Itoa(h), "--enable-logging=stderr", "--v=0",
		"file://"+html)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, tailLines(stderr.String(), 20))
	}
	var console []string
	for line := range strings.Lines(stderr.String()) {
		// Chromium logs every console message of the page as
		// ...:INFO:CONSOLE:N] "text", source: ...; uncaught exceptions too.
		if strings.Contains(line, ":CONSOLE") || strings.Contains(line, "Uncaught") {
			console = append(console, strings.TrimSpace(line))
		}
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v\n%s", err, tailLines(stderr.String(), 20))
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img, console
}

func tailLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(ls[max(0, len(ls)-n):], "\n")
}

// pixels counts the distinct colours, the non-white pixels, and whether
// each wanted colour (#rrggbb) appears.
func pixels(img image.Image, want []string) (distinct, nonWhite int, found map[string]bool) {
	seen := map[uint32]bool{}
	found = map[string]bool{}
	wantRGB := map[uint32]string{}
	for _, h := range want {
		var v uint32
		for _, c := range h[1:] {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= uint32(c - '0')
			default:
				v |= uint32(c-'a') + 10
			}
		}
		wantRGB[v] = h
	}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			v := (r>>8)<<16 | (g>>8)<<8 | bl>>8
			seen[v] = true
			if v != 0xffffff {
				nonWhite++
			}
			if h, ok := wantRGB[v]; ok {
				found[h] = true
			}
		}
	}
	return len(seen), nonWhite, found
}

// TestBrowserRendersReport renders the report in a real browser: the page
// raises no console message (it has no script), the screenshot is not
// blank, and the action colours of the bars are on it.
func TestBrowserRendersReport(t *testing.T) {
	bin := chromium(t)
	var page bytes.Buffer
	if err := buildFixture(t).WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	img, console := render(t, bin, page.String(), 1200, 1600)
	if len(console) > 0 {
		t.Errorf("the page raised console messages:\n%s", strings.Join(console, "\n"))
	}
	distinct, nonWhite, found := pixels(img, []string{actionColours["Accept"], actionColours["Suggest"]})
	total := img.Bounds().Dx() * img.Bounds().Dy()
	t.Logf("screenshot %v: %d colours, %d of %d pixels not white", img.Bounds().Size(), distinct, nonWhite, total)
	if distinct < 16 || nonWhite < total/10 {
		t.Errorf("the screenshot looks blank: %d colours, %d of %d pixels not white", distinct, nonWhite, total)
	}
	if len(found) != 2 {
		t.Errorf("action colours found: %v; want Accept and Suggest bars", found)
	}
}

// TestBrowserSeesConsoleErrors proves the check above is not blind: a page
// with a script error is caught.
func TestBrowserSeesConsoleErrors(t *testing.T) {
	bin := chromium(t)
	_, console := render(t, bin, `<!DOCTYPE html><html><body><p>x</p><script>undefinedFunction();</script></body></html>`, 300, 200)
	if len(console) == 0 || !strings.Contains(strings.Join(console, "\n"), "undefinedFunction") {
		t.Fatalf("a script error was not seen; console lines: %q", console)
	}
}
