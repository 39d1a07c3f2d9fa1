//go:build browser

package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The driver of the browser tests (browser_test.go): a headless Chromium
// that chromedp drives, which fails the test on any console error of a
// page (a script error, a failed load, a Content-Security-Policy
// violation), and which checks each page it is shown for a <main>
// landmark and labelled inputs, measures its weight and first paint, and
// takes its screenshot.

// screenshotDir is where the screenshots go: docs/screenshots of the
// repository (the test runs in cmd/shelldon).
const screenshotDir = "../../docs/screenshots"

// Viewports: a phone (412 CSS pixels wide, a common Android width) for
// every page, and a desktop for the chat.
const (
	phoneWidth, phoneHeight     = 412, 900
	desktopWidth, desktopHeight = 1280, 900
)

// browser is a headless Chromium with one tab, at the daemon base.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string // http://127.0.0.1:PORT

	mu       sync.Mutex
	problems []string // console errors and exceptions, as they came
}

// newBrowser starts a headless Chromium found on PATH (the test is skipped
// without one; CI fails on the skip). It is stopped when the test ends.
func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("no chromium on PATH (Debian: apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.WindowSize(desktopWidth, desktopHeight),
		chromedp.UserDataDir(t.TempDir()),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to start its sandbox as root (CI containers
		// run as root). The pages it loads here are the daemon's own,
		// from 127.0.0.1, so running them unsandboxed risks nothing.
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx, base: base}
	// Start the browser and the tab, then listen to the console.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	console := chromedp.Console(ctx) // subscribed from here on
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError || m.Type == "assert" {
				b.mu.Lock()
				b.problems = append(b.problems, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
				b.mu.Unlock()
			}
		}
	}()
	return b
}

// do runs actions, failing the test with what step says on an error.
func (b *browser) do(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\n%s", step, err, b.dump())
	}
}

// text is the visible text of the first element sel matches, once it is
// visible.
func (b *browser) text(sel string) string {
	b.t.Helper()
	b.do("wait for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// waitText waits until the text of the first element sel matches holds
// want (the page may reload meanwhile).
func (b *browser) waitText(sel, want string) {
	b.t.Helper()
	js := fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.innerText.includes(%q); })()`, sel, want)
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		b.t.Fatalf("waiting for %q in %s: %v\n%s", want, sel, err, b.dump())
	}
}

// url is where the tab is.
func (b *browser) url() string {
	b.t.Helper()
	u, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatal(err)
	}
	return u
}

// dump is the page's text, for a failure message.
func (b *browser) dump() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	u, _ := chromedp.Run(ctx, chromedp.Location())
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		return fmt.Sprintf("(page unreadable: %v)", err)
	}
	return "page " + u + ":\n" + s
}

// consoleClean fails the test on the console errors so far, and forgets
// them.
func (b *browser) consoleClean(page string) {
	b.t.Helper()
	b.mu.Lock()
	got := b.problems
	b.problems = nil
	b.mu.Unlock()
	for _, p := range got {
		b.t.Errorf("page %s: console: %s", page, p)
	}
}

// consoleExpected drops the console problems that hold want (a refusal the
// test provoked, whose page the browser reports loading as a 400); the
// others stay for consoleClean. Finding none is an error.
func (b *browser) consoleExpected(want string) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var kept []string
	for _, p := range b.problems {
		if !strings.Contains(p, want) {
			kept = append(kept, p)
		}
	}
	if len(kept) == len(b.problems) {
		b.t.Errorf("no console message holds %q", want)
	}
	b.problems = kept
}

// a11yJS lists what a page lacks: a <main> landmark, and a label for each
// input, textarea and select a person can see.
const a11yJS = `(() => {
  const bad = [];
  if (document.querySelectorAll("main").length !== 1) bad.push("not exactly one <main>");
  for (const el of document.querySelectorAll("input, textarea, select")) {
    if (el.type === "hidden") continue;
    const named = (el.labels && el.labels.length > 0) || el.getAttribute("aria-label") || el.getAttribute("aria-labelledby");
    if (!named) bad.push("no label: " + el.outerHTML.slice(0, 120));
  }
  if (!document.documentElement.lang) bad.push("no lang on <html>");
  return bad;
})()`

// metricsJS is the page's weight (the bodies of the document and of every
// resource it loaded, cached or not, so the figure does not depend on the
// order of the visits) and its first contentful paint.
const metricsJS = `(() => {
  let bytes = 0;
  for (const e of performance.getEntriesByType("navigation")) bytes += e.encodedBodySize;
  for (const e of performance.getEntriesByType("resource")) bytes += e.encodedBodySize;
  const fcp = performance.getEntriesByName("first-contentful-paint")[0];
  return {bytes: bytes, fcp: fcp ? fcp.startTime : -1};
})()`

type pageMetrics struct {
	Bytes int64   `json:"bytes"`
	FCP   float64 `json:"fcp"`
}

// check looks over the page the tab shows, as name: no console errors, a
// <main>, labelled inputs; it logs the page's weight and first paint
// ("page NAME bytes N fcp-ms X", which scripts/bench.sh reads) and writes
// docs/screenshots/NAME-phone.png at a phone's width, and NAME.png at a
// desktop's as well when desktop is set.
func (b *browser) check(name string, desktop bool) {
	b.t.Helper()
	b.do("wait for "+name, chromedp.WaitVisible(chromedp.CSS("main h1")))
	bad, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](a11yJS))
	if err != nil {
		b.t.Fatalf("page %s: accessibility check: %v", name, err)
	}
	for _, p := range bad {
		b.t.Errorf("page %s: %s", name, p)
	}
	// The first paint has been reported once an animation frame passed.
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`performance.getEntriesByName("first-contentful-paint").length > 0`,
		chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		b.t.Errorf("page %s: no first-contentful-paint entry: %v", name, err)
	}
	m, err := chromedp.Run(b.ctx, chromedp.Evaluate[pageMetrics](metricsJS))
	if err != nil {
		b.t.Fatalf("page %s: metrics: %v", name, err)
	}
	b.t.Logf("page %s bytes %d fcp-ms %.1f", name, m.Bytes, m.FCP)
	b.screenshot(name+"-phone", phoneWidth, phoneHeight, true)
	if desktop {
		b.screenshot(name, desktopWidth, desktopHeight, false)
	}
	b.consoleClean(name)
}

// screenshot writes the whole page at a viewport of w×h CSS pixels (a
// phone's, with mobile emulation, or a desktop's) to screenshotDir/NAME.png,
// and puts the viewport back to the desktop's.
func (b *browser) screenshot(name string, w, h int64, mobile bool) {
	b.t.Helper()
	var opts []chromedp.EmulateViewportOption
	if mobile {
		opts = append(opts, chromedp.EmulatePortrait, chromedp.EmulateMobile)
	}
	b.do("viewport for "+name, chromedp.EmulateViewport(w, h, opts...))
	raw, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	b.do("reset the viewport", chromedp.EmulateViewport(desktopWidth, desktopHeight))
	// The files are committed: make them small.
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	var out bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&out, paletted(img)); err != nil {
		b.t.Fatal(err)
	}
	if out.Len() > len(raw) {
		out.Reset()
		out.Write(raw)
	}
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshotDir, name+".png"), out.Bytes(), 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// paletted is img in at most 256 colours: its most frequent ones, every
// other pixel taking the nearest of them. A page is flat colours and
// anti-aliased text, so this changes little that one can see, and it
// makes the PNG a third or less of its size.
func paletted(img image.Image) *image.Paletted {
	r := img.Bounds()
	count := map[color.RGBA]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			count[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	colors := slices.Collect(maps.Keys(count))
	slices.SortFunc(colors, func(a, b color.RGBA) int {
		if c := cmp.Compare(count[b], count[a]); c != 0 {
			return c
		}
		return cmp.Compare(uint32(a.R)<<24|uint32(a.G)<<16|uint32(a.B)<<8|uint32(a.A), uint32(b.R)<<24|uint32(b.G)<<16|uint32(b.B)<<8|uint32(b.A))
	})
	pal := make(color.Palette, 0, 256)
	for _, c := range colors[:min(len(colors), 256)] {
		pal = append(pal, c)
	}
	out := image.NewPaletted(r, pal)
	index := map[color.RGBA]uint8{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			i, ok := index[c]
			if !ok {
				i = uint8(pal.Index(c))
				index[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	return out
}

// visit opens path (on the daemon) and waits for its heading.
func (b *browser) visit(path string) {
	b.t.Helper()
	b.do("open "+path, chromedp.Navigate(b.base+path), chromedp.WaitVisible(chromedp.CSS("main h1")))
	if u := b.url(); !strings.HasPrefix(u, b.base+path) {
		b.t.Fatalf("opening %s landed on %s", path, u)
	}
}

// mark marks the page the tab shows, so that waitNewPage can tell it from
// the page a navigation brings.
func (b *browser) mark() {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`window.shelldonOldPage = true`)); err != nil {
		b.t.Fatalf("mark the page: %v", err)
	}
}

// waitNewPage waits for a page that mark did not mark to load, and then
// for the first element sel matches in it to hold want.
func (b *browser) waitNewPage(sel, want string) {
	b.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		_, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`!window.shelldonOldPage && document.readyState === "complete"`,
			chromedp.WithPollingTimeout(time.Until(deadline))))
		if err == nil {
			break
		}
		// A navigation ends the poll with the page it ran in; poll
		// again in the new one.
		if b.ctx.Err() != nil || time.Now().After(deadline) {
			b.t.Fatalf("waiting for a new page: %v\n%s", err, b.dump())
		}
	}
	js := fmt.Sprintf(`!!document.querySelector(%q) && document.querySelector(%q).innerText.includes(%q)`, sel, sel, want)
	if _, err := chromedp.Run(b.ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		b.t.Fatalf("the new page has no %q in %s: %v\n%s", want, sel, err, b.dump())
	}
}

// say sends text from the chat page's form; the page's script streams the
// turn and reloads the page at its end (waitNewPage waits for it). What
// the conversation showed just before the reload is kept for streamed.
func (b *browser) say(text string) {
	b.t.Helper()
	b.mark()
	b.do("say "+text,
		chromedp.Evaluate[chromedp.Void](`sessionStorage.removeItem("shelldon-streamed");
		  addEventListener("pagehide", () => sessionStorage.setItem("shelldon-streamed",
		    document.getElementById("conversation").innerText))`),
		chromedp.WaitVisible(chromedp.CSS("#text")),
		chromedp.SendKeys(chromedp.CSS("#text"), text),
		chromedp.Click(chromedp.CSS("#say button[type=submit]")),
	)
}

// setModel switches the provider's model on the settings page.
func (b *browser) setModel(model string) {
	b.t.Helper()
	b.mark()
	b.do("switch the model to "+model,
		chromedp.WaitVisible(chromedp.CSS("#model-name")),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("model-name").value = ""`),
		chromedp.SendKeys(chromedp.CSS("#model-name"), model),
		chromedp.Click(chromedp.CSS("form.settings-model button[type=submit]")),
	)
	b.waitNewPage("section[aria-labelledby=model] table", model)
}

// click clicks sel, which loads a new page, and waits for the first
// element wantSel matches in it to hold want.
func (b *browser) click(step, sel, wantSel, want string) {
	b.t.Helper()
	b.mark()
	b.do(step, chromedp.Click(chromedp.CSS(sel)))
	b.waitNewPage(wantSel, want)
}

// approveOnRequestPage opens, from the approvals page, the card whose
// text holds name, checks that the request's page shows want, and
// approves it there; check photographs the request's page.
func (b *browser) approveOnRequestPage(name, want string, check bool) {
	b.t.Helper()
	b.waitText("main", name)
	if check {
		b.check("approvals", false)
	}
	href, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf(`(() => {
	  for (const card of document.querySelectorAll("main .card")) {
	    const a = card.querySelector('a[href^="/approvals/"]');
	    if (a && card.innerText.includes(%q)) return a.getAttribute("href");
	  }
	  return "";
	})()`, name)))
	if err != nil || href == "" {
		b.t.Fatalf("no card with a link for %s on /approvals (%v)\n%s", name, err, b.dump())
	}
	b.click("open the request for "+name, fmt.Sprintf(`main .card a[href=%q]`, href), "main", want)
	if check {
		b.check("approval", false)
	}
	b.click("approve "+name, fmt.Sprintf(`main form[action=%q] button`, href+"/approve"), "main .note", "Approved.")
}

// pickProvider puts the configured provider named name first on the
// settings page.
func (b *browser) pickProvider(name string) {
	b.t.Helper()
	b.mark()
	b.do("switch the provider to "+name,
		chromedp.WaitVisible(chromedp.CSS("#provider-pick")),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		  const s = document.getElementById("provider-pick");
		  for (const o of s.options) if (o.text.startsWith(%q + " (")) s.value = o.value;
		})()`, name)),
		chromedp.Click(chromedp.CSS("form.settings-provider button[type=submit]")),
	)
	b.waitNewPage("section[aria-labelledby=model] table tbody tr td:nth-child(2)", name)
}

// streamed is what the conversation showed when the page the last say
// left reloaded: the reply the script streamed into it.
func (b *browser) streamed() string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`sessionStorage.getItem("shelldon-streamed") || ""`))
	if err != nil {
		b.t.Fatalf("read what was streamed: %v", err)
	}
	return s
}
